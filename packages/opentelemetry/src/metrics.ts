import { type Meter, type MeterProvider, metrics } from '@opentelemetry/api'
import type {
  ObservedEvent,
  ObservedLimiterInfo,
  Observer,
  RuleEvent,
} from '@tollgate/core/observe'
import { AttributeCache } from './attribute-cache.js'
import {
  ATTRIBUTES,
  DURATION_BOUNDARIES,
  INSTRUMENTS,
  METER_NAME,
  RATIO_BOUNDARIES,
} from './names.js'
import { observeStores } from './store-gauges.js'

export type TollgateMetricsOptions = {
  /** Where the instruments are made. @default the global one (`metrics.getMeterProvider()`) */
  readonly meterProvider?: MeterProvider | undefined
}

/** The binding's version, given with the meter's name. */
const VERSION = '0.1.0'

/**
 * An observer that records what an observed limiter does as OpenTelemetry metrics (see
 * docs/concepts/observability.md for every instrument). Without an SDK registered, the global
 * provider is OpenTelemetry's no-op one: recording then does nothing.
 * @example
 * const limiter = observedLimiter({ rules, observers: [tollgateMetrics()] })
 */
export function tollgateMetrics(options: TollgateMetricsOptions = {}): Observer {
  const provider = options.meterProvider ?? metrics.getMeterProvider()
  const meter: Meter = provider.getMeter(METER_NAME, VERSION)
  const decisions = meter.createCounter(INSTRUMENTS.decisions, {
    description: "Rules' decisions on requests, by rule, outcome and mode",
    unit: '{decision}',
  })
  const charged = meter.createCounter(INSTRUMENTS.charged, {
    description: 'Cost units charged to admitted requests, by rule and mode',
    unit: '{unit}',
  })
  const remainingRatio = meter.createHistogram(INSTRUMENTS.remainingRatio, {
    description: 'What a rule had left at admission, as a share of its limit (0: at the limit)',
    unit: '1',
    advice: { explicitBucketBoundaries: RATIO_BOUNDARIES },
  })
  const storeDuration = meter.createHistogram(INSTRUMENTS.storeDuration, {
    description: 'How long store calls take, by store kind and operation',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BOUNDARIES },
  })
  const storeErrors = meter.createCounter(INSTRUMENTS.storeErrors, {
    description:
      "Store failures (errors, timeouts, bad replies, a failed clock) decided by the rules' onStoreError",
    unit: '{error}',
  })
  const clockSteps = meter.createCounter(INSTRUMENTS.clockSteps, {
    description: 'Times the clock read earlier than before',
    unit: '{step}',
  })
  const stores = observeStores(meter)

  const ruleAttributes = new AttributeCache((rule, outcome, mode) => ({
    [ATTRIBUTES.rule]: rule,
    [ATTRIBUTES.outcome]: outcome,
    [ATTRIBUTES.mode]: mode,
  }))
  const ruleModeAttributes = new AttributeCache((rule, mode) => ({
    [ATTRIBUTES.rule]: rule,
    [ATTRIBUTES.mode]: mode,
  }))
  const storeAttributes = new AttributeCache((kind, operation, error) =>
    error === ''
      ? { [ATTRIBUTES.storeKind]: kind, [ATTRIBUTES.storeOperation]: operation }
      : {
          [ATTRIBUTES.storeKind]: kind,
          [ATTRIBUTES.storeOperation]: operation,
          [ATTRIBUTES.errorType]: error,
        },
  )
  const directionAttributes = new AttributeCache((direction) => ({
    [ATTRIBUTES.clockDirection]: direction,
  }))

  function rule(event: RuleEvent): void {
    decisions.add(1, ruleAttributes.get(event.rule, event.outcome, event.mode))
    if (event.charged > 0 || (event.outcome === 'admitted' && event.limit !== undefined)) {
      const attributes = ruleModeAttributes.get(event.rule, event.mode, '')
      if (event.charged > 0) charged.add(event.charged, attributes)
      if (event.outcome === 'admitted' && event.limit !== undefined && event.limit > 0) {
        remainingRatio.record((event.remaining ?? 0) / event.limit, attributes)
      }
    }
  }

  return {
    attach(limiter: ObservedLimiterInfo) {
      stores.add(limiter.store, limiter.storeKind)
    },
    observe(event: ObservedEvent) {
      switch (event.type) {
        case 'rule':
          rule(event)
          return
        case 'store.call':
          storeDuration.record(
            event.durationMs / 1000,
            storeAttributes.get(event.store, event.operation, event.error ?? ''),
          )
          return
        case 'store.error':
          storeErrors.add(1, storeAttributes.get(event.store, event.operation, event.reason))
          return
        case 'clock.step':
          clockSteps.add(1, directionAttributes.get(event.direction, '', ''))
          return
        default:
          // A decision's verdict is counted through its rule events; kinds added later are
          // ignored until this binding knows them.
          return
      }
    },
  }
}
