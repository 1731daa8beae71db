import { type ObservedLimiterOptions, type Observer, observedLimiter } from '@tollgate/core/observe'
import { inMemoryMetrics } from '@tollgate/test-utils/metrics'
import { afterEach } from 'vitest'
import { type TollgateMetricsOptions, tollgateMetrics } from './metrics.js'

type MeteredOptions = Omit<ObservedLimiterOptions, 'observers'> & {
  /** `tollgateMetrics`'s own options (its meter provider is the fixture's). */
  readonly metrics?: Omit<TollgateMetricsOptions, 'meterProvider'>
  /** Observers after the metrics. */
  readonly observers?: readonly Observer[]
}

/** Limiters observed by `tollgateMetrics` on one in-memory SDK, which the caller shuts down. */
export function meteredOnce() {
  const sdk = inMemoryMetrics()
  return {
    meterProvider: sdk.meterProvider,
    limiter({ metrics, observers = [], ...options }: MeteredOptions) {
      return observedLimiter({
        ...options,
        observers: [
          tollgateMetrics({ ...metrics, meterProvider: sdk.meterProvider }),
          ...observers,
        ],
      })
    },
    collect: () => sdk.collect(),
    shutdown: () => sdk.shutdown(),
  }
}

/**
 * `meteredOnce` for every test of a file, fresh for each (shut down after it):
 * `metered.limiter({ rules })`, then `await metered.collect()`.
 */
export function meteredLimiters() {
  let current = meteredOnce()
  afterEach(async () => {
    await current.shutdown()
    current = meteredOnce()
  })
  return {
    get meterProvider() {
      return current.meterProvider
    },
    limiter: (options: MeteredOptions) => current.limiter(options),
    collect: () => current.collect(),
  }
}
