import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { observedLimiter, shadowReport } from '@tollgate/core/observe'
import { type Clock, rateLimit } from '@tollgate/express'
import { shadowReportMetrics, tollgateMetrics } from '@tollgate/opentelemetry'
import express, { type Express } from 'express'

/**
 * An Express API whose limiter exports OpenTelemetry metrics for Prometheus to scrape at
 * `/metrics`: 10 requests a second per IP with bursts of 20, and a stricter login rule
 * dark-launched in shadow mode, whose report says whom it would have hit. `clock` is for tests.
 */
export function createApp(options: { clock?: Clock } = {}) {
  // Served on the app's own port rather than the exporter's (9464): one port to open.
  const exporter = new PrometheusExporter({ preventServerStart: true })
  const meterProvider = new MeterProvider({ readers: [exporter] })
  const report = shadowReport({ capacity: 32 })
  shadowReportMetrics(report, { meterProvider })
  const limiter = observedLimiter({
    rules: [
      { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
      {
        id: 'login-strict',
        match: { route: 'POST /login', identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 3,
        window: '1m',
        mode: 'shadow',
      },
    ],
    clock: options.clock,
    observers: [tollgateMetrics({ meterProvider }), report],
  })
  const app: Express = express()
  // Before the limiter: scrapes are not rate-limited.
  app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res))
  app.use(rateLimit(limiter))
  app.get('/', (_req, res) => {
    res.send('Hello')
  })
  app.post('/login', (_req, res) => {
    res.send('Welcome')
  })
  return { app, report, shutdown: () => meterProvider.shutdown() }
}
