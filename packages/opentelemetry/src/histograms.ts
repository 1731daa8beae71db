import type { BatchObservableResult, Meter, Observable } from '@opentelemetry/api'
import type { AttributeCache } from './attribute-cache.js'
import { DeferredHistogram } from './deferred-histogram.js'

/**
 * How histograms are recorded: `'buckets'`, aggregated here, exactly, into the same buckets as
 * the SDK's histogram, and exported as the classic Prometheus series (`<name>.bucket` by `le`,
 * cumulative, `<name>.count`, `<name>.sum`), which costs a few additions per value; `true`, by
 * the SDK's histograms (each value costs the SDK's `record`, at collection); `false`, not at all.
 */
export type HistogramMode = boolean | 'buckets'

type Spec = {
  readonly name: string
  readonly description: string
  readonly unit: string
  readonly boundaries: readonly number[]
}

/** One histogram of the binding: values go in by series (an `AttributeCache` index). */
export type HistogramSink = {
  readonly record: (value: number, series: number) => void
  /** Hands what was recorded to the SDK; called first in the collection callback. */
  readonly collect: (result: BatchObservableResult) => void
  /** The observable instruments `collect` reports to (none for the SDK's histograms). */
  readonly observables: readonly Observable[]
}

const NONE: HistogramSink = { record: () => {}, collect: () => {}, observables: [] }

export function histogramSink(
  meter: Meter,
  mode: HistogramMode,
  spec: Spec,
  cache: AttributeCache,
): HistogramSink {
  if (mode === false) return NONE
  if (mode === true) {
    const histogram = meter.createHistogram(spec.name, {
      description: spec.description,
      unit: spec.unit,
      advice: { explicitBucketBoundaries: [...spec.boundaries] },
    })
    const deferred = new DeferredHistogram(histogram, cache)
    return {
      record: (value, series) => deferred.record(value, series),
      collect: () => deferred.flush(),
      observables: [],
    }
  }
  return bucketSink(meter, spec, cache)
}

/**
 * Bucket counts, count and sum per series, kept exactly as the SDK's histogram keeps them. They
 * are cumulative sums, exported as up-down counters (sums not declared monotonic) rather than
 * counters: the Prometheus exporter then names them `<name>_bucket`, `<name>_count` and
 * `<name>_sum`, the series of a classic histogram that `histogram_quantile` reads, where a
 * counter would get `_total` appended (`_bucket_total`).
 */
function bucketSink(meter: Meter, spec: Spec, cache: AttributeCache): HistogramSink {
  const bounds = spec.boundaries
  const buckets = meter.createObservableUpDownCounter(`${spec.name}.bucket`, {
    description: `${spec.description}: values at or below le (cumulative)`,
    unit: '{value}',
  })
  const count = meter.createObservableUpDownCounter(`${spec.name}.count`, {
    description: `${spec.description}: values recorded`,
    unit: '{value}',
  })
  const sum = meter.createObservableUpDownCounter(`${spec.name}.sum`, {
    description: `${spec.description}: their sum`,
    unit: spec.unit,
  })
  const counts: Float64Array[] = []
  const sums: number[] = []
  // The attributes of each series' buckets, with `le`, built once.
  const withLe: Array<ReadonlyArray<Record<string, string | number | boolean>>> = []
  return {
    record(value, series) {
      let held = counts[series]
      if (held === undefined) {
        held = new Float64Array(bounds.length + 1)
        counts[series] = held
        sums[series] = 0
      }
      // The first bound at or above the value (OpenTelemetry's buckets are upper-inclusive).
      let low = 0
      let high = bounds.length
      while (low < high) {
        const mid = (low + high) >> 1
        if (value <= bounds[mid]!) high = mid
        else low = mid + 1
      }
      held[low] = held[low]! + 1
      sums[series] = sums[series]! + value
    },
    collect(result) {
      for (let series = 0; series < counts.length; series++) {
        const held = counts[series]
        if (held === undefined) continue
        const attributes = cache.series[series]!.attributes
        let les = withLe[series]
        if (les === undefined) {
          les = [...bounds.map(String), '+Inf'].map((le) => Object.freeze({ ...attributes, le }))
          withLe[series] = les
        }
        let running = 0
        for (let i = 0; i < held.length; i++) {
          running += held[i]!
          result.observe(buckets, running, les[i])
        }
        result.observe(count, running, attributes)
        result.observe(sum, sums[series]!, attributes)
      }
    },
    observables: [buckets, count, sum],
  }
}
