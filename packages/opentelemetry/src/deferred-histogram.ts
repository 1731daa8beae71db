import type { Histogram } from '@opentelemetry/api'
import type { AttributeCache } from './attribute-cache.js'

/** Values held before they are handed to the SDK: 16 K, 192 KiB. */
const HELD = 16_384

/**
 * A histogram whose values are kept in typed arrays on the request's path and handed to the
 * SDK's histogram when metrics are collected (or when the arrays fill up): recording is then
 * two array writes, where the SDK's `record` hashes the attributes on every call. Collection
 * reads the observable callbacks before the histograms, so every value held is in the
 * collection that follows it. Memory is fixed, whatever the traffic.
 */
export class DeferredHistogram {
  private readonly values = new Float64Array(HELD)
  private readonly series = new Int32Array(HELD)
  private held = 0

  constructor(
    private readonly histogram: Histogram,
    private readonly cache: AttributeCache,
  ) {}

  record(value: number, series: number): void {
    const at = this.held
    this.values[at] = value
    this.series[at] = series
    this.held = at + 1
    if (this.held === HELD) this.flush()
  }

  /** Hands every held value to the SDK. */
  flush(): void {
    const { values, series, histogram } = this
    const all = this.cache.series
    const held = this.held
    this.held = 0
    for (let i = 0; i < held; i++) histogram.record(values[i]!, all[series[i]!]!.attributes)
  }
}
