import { type MeterProvider, metrics } from '@opentelemetry/api'
import type { ShadowReport } from '@tollgate/core/observe'
import { refuseUnknownOptions } from '@tollgate/core/store'
import { ATTRIBUTES, INSTRUMENTS, METER_NAME } from './names.js'

/** Options of `shadowReportMetrics`: where to record, and how many heavy keys per rule. */
export type ShadowReportMetricsOptions = {
  /** @default the global one (`metrics.getMeterProvider()`) */
  readonly meterProvider?: MeterProvider | undefined
  /** How many of the heaviest keys are exported per rule, by rank. @default 10 */
  readonly ranks?: number
}

/**
 * Exports a shadow report as gauges read at each collection: for each shadow rule, the counts
 * of its heaviest keys by rank (1 the heaviest) and the sketch's error bound. A rank, never the
 * key: which client it is stays in the process (`report.readRule`).
 * @example
 * const report = shadowReport()
 * shadowReportMetrics(report)
 */
export function shadowReportMetrics(
  report: ShadowReport,
  options: ShadowReportMetricsOptions = {},
): void {
  refuseUnknownOptions(options, ['meterProvider', 'ranks'], 'shadowReportMetrics()')
  const ranks = options.ranks ?? 10
  if (!Number.isSafeInteger(ranks) || ranks < 1) {
    throw new RangeError(`shadowReportMetrics(): ranks: expected a whole number ≥ 1, got ${ranks}`)
  }
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME)
  const counts = meter.createObservableGauge(INSTRUMENTS.shadowHeavyHitters, {
    description: 'Would-be denials of the heaviest keys of a shadow rule, by rank (1: heaviest)',
    unit: '{request}',
  })
  const bounds = meter.createObservableGauge(INSTRUMENTS.shadowErrorBound, {
    description: 'The most a heavy-hitter count of a shadow rule may be above the truth',
    unit: '{request}',
  })
  meter.addBatchObservableCallback(
    (result) => {
      for (const rule of report.read()) {
        result.observe(bounds, rule.errorBound, { [ATTRIBUTES.rule]: rule.rule })
        rule.heaviest.slice(0, ranks).forEach((hitter, i) => {
          result.observe(counts, hitter.count, {
            [ATTRIBUTES.rule]: rule.rule,
            [ATTRIBUTES.rank]: i + 1,
          })
        })
      }
    },
    [counts, bounds],
  )
}
