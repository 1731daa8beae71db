/**
 * `@tollgate/opentelemetry`: OpenTelemetry metrics for Tollgate. `tollgateMetrics()` is an
 * observer for `observedLimiter` (`@tollgate/core/observe`); `shadowReportMetrics()` exports
 * shadow reports. See docs/concepts/observability.md for the instruments and their attributes.
 */

export { type TollgateMetricsOptions, tollgateMetrics } from './metrics.js'
export { ATTRIBUTES, INSTRUMENTS, METER_NAME } from './names.js'
export { type ShadowReportMetricsOptions, shadowReportMetrics } from './shadow-metrics.js'
