import {
  createNoopMeter,
  type Meter,
  type MeterProvider,
  metrics,
  type Observable,
} from '@opentelemetry/api'
import type {
  ObservedEvent,
  ObservedEventType,
  ObservedLimiterInfo,
  Observer,
  RuleEvent,
} from '@tollgate/core/observe'
import { refuseUnknownOptions } from '@tollgate/core/store'
import { AttributeCache } from './attribute-cache.js'
import { type HistogramMode, histogramSink } from './histograms.js'
import { holdInstruments } from './hold-instruments.js'
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
  /**
   * How to record the histograms (remaining ÷ limit at admission, store call durations, queue
   * waits). `'buckets'`: aggregated here, exactly, into the same buckets as the SDK's
   * histogram, and exported as the classic Prometheus series (`<name>.bucket` by `le`,
   * `<name>.count`, `<name>.sum`), for a few additions per value. `true`: as the SDK's
   * histograms (what an OTLP backend reads as a histogram, and Views can rebucket); each value
   * then costs the SDK's `record`, which hashes its attributes: about 1 µs, several times all
   * the rest of a request's metrics. `false`: not at all.
   * @default 'buckets'
   */
  readonly histograms?: HistogramMode | undefined
}

/** The binding's version, given with the meter's name. */
const VERSION = '0.1.0'

const RATIO = {
  name: INSTRUMENTS.remainingRatio,
  description: 'What a rule had left at admission, as a share of its limit (0: at the limit)',
  unit: '1',
  boundaries: RATIO_BOUNDARIES,
}
const DURATION = {
  name: INSTRUMENTS.storeDuration,
  description: 'How long store calls take, by store kind and operation',
  unit: 's',
  boundaries: DURATION_BOUNDARIES,
}

/** The events counted without histograms; with them, store calls too (their durations). */
const COUNTED: readonly ObservedEventType[] = [
  'rule',
  'store.error',
  'clock.step',
  'queue.wait',
  'concurrency.slots',
  'concurrency.lease-expired',
  'rules.update',
]

/**
 * An observer that records what an observed limiter does as OpenTelemetry metrics (see
 * docs/concepts/observability.md for every instrument). Without an SDK registered, the global
 * provider is OpenTelemetry's no-op one: recording then does nothing.
 * @example
 * const limiter = observedLimiter({ rules, observers: [tollgateMetrics()] })
 */
export function tollgateMetrics(options: TollgateMetricsOptions = {}): Observer {
  refuseUnknownOptions(options, ['meterProvider', 'histograms'], 'tollgateMetrics()')
  const provider = options.meterProvider ?? metrics.getMeterProvider()
  const histograms = options.histograms ?? 'buckets'
  if (typeof histograms !== 'boolean' && histograms !== 'buckets') {
    throw new TypeError(
      `tollgateMetrics(): histograms: expected true, false or 'buckets', got ${String(histograms)}`,
    )
  }
  const meter: Meter = provider.getMeter(METER_NAME, VERSION)
  // OpenTelemetry's no-op meter (no SDK was registered) never records, even once one is later:
  // the observer then counts nothing, so that the limiter builds no event for it.
  if (Object.getPrototypeOf(meter) === Object.getPrototypeOf(createNoopMeter())) {
    return { events: [], observe: () => {} }
  }
  // Counters are summed here and read at each collection (observable counters), histogram
  // values held until then (DeferredHistogram) or aggregated here ('buckets'): a request costs
  // a few additions and array writes, where the SDK's instruments hash the attributes on every
  // call.
  const decisions = meter.createObservableCounter(INSTRUMENTS.decisions, {
    description: "Rules' decisions on requests, by rule, outcome and mode",
    unit: '{decision}',
  })
  const charged = meter.createObservableCounter(INSTRUMENTS.charged, {
    description: 'Cost units charged to admitted requests, by rule and mode',
    unit: '{unit}',
  })
  const storeErrors = meter.createObservableCounter(INSTRUMENTS.storeErrors, {
    description:
      "Store failures (errors, timeouts, bad replies, a failed clock) decided by the rules' onStoreError",
    unit: '{error}',
  })
  const clockSteps = meter.createObservableCounter(INSTRUMENTS.clockSteps, {
    description:
      'Clock steps: backward, reading earlier than before; forward, running ahead of the monotonic clock',
    unit: '{step}',
  })
  const rulesUpdates = meter.createObservableCounter(INSTRUMENTS.rulesUpdates, {
    description:
      'Rules changed while running: applied, or refused (the running rules stayed) by error type',
    unit: '{update}',
  })
  const stores = observeStores(meter)
  const holds = holdInstruments(meter, histograms)

  // A degraded decision's mode is keyed `<mode> degraded`: its own series, with the attribute.
  const ruleAttributes = new AttributeCache((rule, outcome, modeKey) => {
    const [mode, degraded] = modeKey.split(' ')
    return {
      [ATTRIBUTES.rule]: rule,
      [ATTRIBUTES.outcome]: outcome,
      [ATTRIBUTES.mode]: mode,
      ...(degraded === undefined ? {} : { [ATTRIBUTES.degraded]: true }),
    }
  })
  const ruleModeAttributes = new AttributeCache((rule, mode) => ({
    [ATTRIBUTES.rule]: rule,
    [ATTRIBUTES.mode]: mode,
  }))
  const storeErrorAttributes = new AttributeCache((kind, operation, error) => ({
    [ATTRIBUTES.storeKind]: kind,
    [ATTRIBUTES.storeOperation]: operation,
    [ATTRIBUTES.errorType]: error,
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
  const updateAttributes = new AttributeCache((outcome, error) =>
    error === ''
      ? { [ATTRIBUTES.updateOutcome]: outcome }
      : { [ATTRIBUTES.updateOutcome]: outcome, [ATTRIBUTES.errorType]: error },
  )

  const ratios = histogramSink(meter, histograms, RATIO, ruleModeAttributes)
  const durations = histogramSink(meter, histograms, DURATION, storeAttributes)
  const counted: ReadonlyArray<readonly [Observable, AttributeCache]> = [
    [decisions, ruleAttributes],
    [charged, ruleModeAttributes],
    [storeErrors, storeErrorAttributes],
    [clockSteps, directionAttributes],
    [rulesUpdates, updateAttributes],
    ...holds.observables,
  ]
  const sinks = [ratios, durations, holds.waits]
  meter.addBatchObservableCallback(
    (result) => {
      for (const sink of sinks) sink.collect(result)
      for (const [instrument, cache] of counted) {
        for (const series of cache.series)
          result.observe(instrument, series.value, series.attributes)
      }
    },
    [...counted.map(([instrument]) => instrument), ...sinks.flatMap((sink) => sink.observables)],
  )

  function rule(event: RuleEvent): void {
    ruleAttributes.get(
      event.rule,
      event.outcome,
      event.degraded === true ? `${event.mode} degraded` : event.mode,
    ).value++
    // A queued request is admitted: charged, and its remaining share recorded, as any other.
    const admitted = event.outcome === 'admitted' || event.outcome === 'queued'
    if (event.charged > 0 || (admitted && event.limit !== undefined)) {
      const series = ruleModeAttributes.get(event.rule, event.mode, '')
      series.value += event.charged
      if (admitted && event.limit !== undefined && event.limit > 0) {
        ratios.record((event.remaining ?? 0) / event.limit, series.index)
      }
    }
  }

  return {
    events: histograms === false ? COUNTED : [...COUNTED, 'store.call'],
    attach(limiter: ObservedLimiterInfo) {
      stores.add(limiter.store, limiter.storeKind)
    },
    observe(event: ObservedEvent) {
      switch (event.type) {
        case 'rule':
          rule(event)
          return
        case 'store.call':
          durations.record(
            event.durationMs / 1000,
            storeAttributes.get(event.store, event.operation, event.error ?? '').index,
          )
          return
        case 'store.error':
          storeErrorAttributes.get(event.store, event.operation, event.reason).value++
          return
        case 'clock.step':
          directionAttributes.get(event.direction, '', '').value++
          return
        case 'queue.wait':
          holds.queue(event)
          return
        case 'concurrency.slots':
          holds.slots(event)
          return
        case 'concurrency.lease-expired':
          holds.expired(event)
          return
        case 'rules.update':
          updateAttributes.get(event.outcome, event.reason ?? '', '').value++
          return
        default:
          // A decision's verdict is counted through its rule events; kinds added later are
          // ignored until this binding knows them.
          return
      }
    },
  }
}
