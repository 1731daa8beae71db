import type { Meter, Observable } from '@opentelemetry/api'
import type {
  ConcurrencySlotsEvent,
  LeaseExpiredEvent,
  QueueWaitEvent,
} from '@tollgate/core/observe'
import { AttributeCache } from './attribute-cache.js'
import { type HistogramMode, histogramSink } from './histograms.js'
import { ATTRIBUTES, INSTRUMENTS, WAIT_BOUNDARIES } from './names.js'

/**
 * What requests hold: a queue's length and waits, concurrency slots in use, leases the store
 * expired. The length and the slots are up-down sums kept here and read at each collection;
 * waits are held as the other histograms are.
 */
export function holdInstruments(meter: Meter, histograms: HistogramMode) {
  const length = meter.createObservableUpDownCounter(INSTRUMENTS.queueLength, {
    description:
      'Requests waiting for their slot in a queue rule, or for a slot of a concurrency rule, by rule',
    unit: '{request}',
  })
  const slots = meter.createObservableUpDownCounter(INSTRUMENTS.slotsInUse, {
    description: "Slots of a concurrency rule held by this process's requests, by rule",
    unit: '{slot}',
  })
  const expired = meter.createObservableCounter(INSTRUMENTS.leasesExpired, {
    description:
      "Slots of a concurrency rule whose lease ran out before their holder renewed or released them, counted once by the process whose store removed them (a sweep, or the holder's renewal)",
    unit: '{lease}',
  })
  const byRule = () => new AttributeCache((rule) => ({ [ATTRIBUTES.rule]: rule }))
  const lengths = byRule()
  const inUse = byRule()
  const expiries = byRule()
  const waitAttributes = new AttributeCache((rule, result) => ({
    [ATTRIBUTES.rule]: rule,
    [ATTRIBUTES.queueResult]: result,
  }))
  const waits = histogramSink(
    meter,
    histograms,
    {
      name: INSTRUMENTS.queueWait,
      description:
        'How long requests waited for their slot, by rule and result (served, refused, abandoned)',
      unit: 's',
      boundaries: WAIT_BOUNDARIES,
    },
    waitAttributes,
  )
  const observables: ReadonlyArray<readonly [Observable, AttributeCache]> = [
    [length, lengths],
    [slots, inUse],
    [expired, expiries],
  ]
  return {
    observables,
    waits,
    queue(event: QueueWaitEvent): void {
      const series = lengths.get(event.rule, '', '')
      if (event.state === 'waiting') {
        series.value++
        return
      }
      series.value--
      waits.record(event.ms / 1000, waitAttributes.get(event.rule, event.state, '').index)
    },
    slots(event: ConcurrencySlotsEvent): void {
      inUse.get(event.rule, '', '').value += event.change
    },
    expired(event: LeaseExpiredEvent): void {
      expiries.get(event.rule, '', '').value += event.count
    },
  }
}
