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
