import { messageOf } from '../limiter/report.js'
import type { Logger } from '../limiter/types.js'
import { invalidOption } from '../options/option-values.js'
import type { ObservedEvent, ObservedEventType, ObservedLimiterInfo, Observer } from './events.js'

/** Hands each event to every observer that counts its kind; one that throws is reported once. */
export type Emit = (event: ObservedEvent) => void

/** Every kind of event, in the order the docs list them. */
const EVENT_TYPES: readonly ObservedEventType[] = [
  'rule',
  'decision',
  'store.call',
  'store.error',
  'clock.step',
  'queue.wait',
  'concurrency.slots',
  'concurrency.lease-expired',
  'rules.update',
]

export function checkObservers(observers: unknown): readonly Observer[] {
  const bad = (message: string) => invalidOption('observers', message)
  if (!Array.isArray(observers)) throw bad('expected an array of observers')
  observers.forEach((observer: Partial<Observer> | null, i) => {
    if (typeof observer?.observe !== 'function') {
      throw bad(`observers[${i}] is not an observer: expected { observe(event) }`)
    }
    if (observer.attach !== undefined && typeof observer.attach !== 'function') {
      throw bad(`observers[${i}].attach: expected a function, got ${typeof observer.attach}`)
    }
    const events: unknown = observer.events
    if (events === undefined) return
    if (!Array.isArray(events)) throw bad(`observers[${i}].events: expected a list of event types`)
    for (const type of events) {
      if (!EVENT_TYPES.includes(type)) {
        throw bad(
          `observers[${i}].events: unknown event type ${JSON.stringify(type)} (known: ${EVENT_TYPES.join(', ')})`,
        )
      }
    }
  })
  return observers as readonly Observer[]
}

/** What the observed limiter emits through, and which kinds of event anyone counts. */
export type FanOut = {
  readonly emit: Emit
  readonly wants: (type: ObservedEventType) => boolean
}

export function fanOut(
  observers: readonly Observer[],
  info: ObservedLimiterInfo,
  logger: Logger | false,
): FanOut {
  let warned = false
  const failed = (error: unknown) => {
    if (warned || logger === false) return
    warned = true
    try {
      logger.warn(`[tollgate] WARN_OBSERVER_THREW: an observer threw: ${messageOf(error)}`)
    } catch {
      // A broken logger must not turn a decision into an error.
    }
  }
  for (const observer of observers) {
    try {
      observer.attach?.(info)
    } catch (error) {
      failed(error)
    }
  }
  // The observers of each kind, bound once: an event reaches only those that count it.
  const byType = new Map<string, Array<(event: ObservedEvent) => void>>()
  for (const type of EVENT_TYPES) {
    const counting = observers.filter((o) => o.events === undefined || o.events.includes(type))
    if (counting.length > 0)
      byType.set(
        type,
        counting.map((o) => o.observe.bind(o)),
      )
  }
  const emit: Emit = (event) => {
    const list = byType.get(event.type)
    if (list === undefined) return
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(event)
      } catch (error) {
        failed(error)
      }
    }
  }
  return { emit, wants: (type) => byType.has(type) }
}
