export { METRIC_RULES, SLOT_WAIT_RULES } from './metric-rules.js'

import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'

/** A data point as tests compare it: its attributes and its value (a sum, or a histogram). */
export type Point = {
  readonly attributes: Record<string, unknown>
  readonly value: number | { readonly count: number; readonly sum: number }
  /** A histogram's counts per bucket (not cumulative), the last above every bound. */
  readonly buckets?: readonly number[]
}

/**
 * The SDK with its in-memory exporter behind a reader that only exports when asked: `collect()`
 * flushes and returns every instrument's points by name (cumulative, so each collection holds
 * everything since the start).
 */
export function inMemoryMetrics() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 2 ** 30 })
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    meterProvider,
    async collect(): Promise<Map<string, Point[]>> {
      exporter.reset()
      await reader.forceFlush()
      const byName = new Map<string, Point[]>()
      const latest = exporter.getMetrics().at(-1)
      for (const scope of latest?.scopeMetrics ?? []) {
        for (const metric of scope.metrics) {
          byName.set(
            metric.descriptor.name,
            metric.dataPoints.map((point) => ({
              attributes: { ...point.attributes },
              value:
                typeof point.value === 'number'
                  ? point.value
                  : {
                      count: (point.value as { count: number }).count,
                      sum: (point.value as { sum: number }).sum,
                    },
              ...(typeof point.value === 'number'
                ? {}
                : {
                    buckets: [...(point.value as { buckets: { counts: number[] } }).buckets.counts],
                  }),
            })),
          )
        }
      }
      foldBucketSeries(byName)
      return byName
    },
    shutdown: () => meterProvider.shutdown(),
  }
}

/** The points of `name` as `attribute values → value` lines, sorted, for exact comparisons. */
export function linesOf(points: readonly Point[] | undefined, keys: readonly string[]): string[] {
  return (points ?? [])
    .map((point) => {
      const value = typeof point.value === 'number' ? point.value : point.value.count
      return `${keys.map((key) => String(point.attributes[key] ?? '-')).join(' ')} = ${value}`
    })
    .sort()
}

/** Attributes as a key, `le` left out: the series a bucket belongs to. */
const seriesKey = (attributes: Record<string, unknown>) =>
  JSON.stringify(
    Object.keys(attributes)
      .filter((key) => key !== 'le')
      .sort()
      .map((key) => [key, attributes[key]]),
  )

/**
 * Histograms exported as their Prometheus series (`tollgateMetrics({ histograms: 'buckets' })`:
 * `<name>.bucket` by `le`, `<name>.count`, `<name>.sum`) are also given under `<name>`, as the
 * SDK's histogram points would be (count, sum, buckets not cumulative), so that a test reads a
 * histogram the same whichever way it was recorded. The series themselves stay.
 */
function foldBucketSeries(byName: Map<string, Point[]>): void {
  for (const [name, counts] of [...byName]) {
    if (!name.endsWith('.count')) continue
    const base = name.slice(0, -'.count'.length)
    const buckets = byName.get(`${base}.bucket`)
    const sums = byName.get(`${base}.sum`)
    if (buckets === undefined || sums === undefined || byName.has(base)) continue
    byName.set(
      base,
      counts.map((point) => {
        const key = seriesKey(point.attributes)
        const cumulative = buckets
          .filter((bucket) => seriesKey(bucket.attributes) === key)
          .map((bucket) => {
            const le = String((bucket.attributes as { le?: unknown }).le)
            return [le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), bucket.value as number]
          })
          .sort((a, b) => a[0]! - b[0]!)
          .map(([, value]) => value!)
        const sum = sums.find((candidate) => seriesKey(candidate.attributes) === key)
        return {
          attributes: point.attributes,
          value: { count: point.value as number, sum: sum?.value as number },
          buckets: cumulative.map((value, i) => value - (i === 0 ? 0 : cumulative[i - 1]!)),
        }
      }),
    )
  }
}
