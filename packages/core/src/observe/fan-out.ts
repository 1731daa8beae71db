import { RateLimitError } from '../errors.js'
import { messageOf } from '../limiter/report.js'
import type { Logger } from '../limiter/types.js'
import type { ObservedEvent, ObservedLimiterInfo, Observer } from './events.js'

/** Hands each event to every observer; one that throws is reported once and skipped. */
export type Emit = (event: ObservedEvent) => void

export function checkObservers(observers: unknown): readonly Observer[] {
  const bad = (message: string) =>
    new RateLimitError('ERR_RL_INVALID_RULE', `observers: ${message}`, { field: 'observers' })
  if (!Array.isArray(observers)) throw bad('expected an array of observers')
  observers.forEach((observer: Partial<Observer> | null, i) => {
    if (typeof observer?.observe !== 'function') {
      throw bad(`observers[${i}] is not an observer: expected { observe(event) }`)
    }
    if (observer.attach !== undefined && typeof observer.attach !== 'function') {
      throw bad(`observers[${i}].attach: expected a function, got ${typeof observer.attach}`)
    }
  })
  return observers as readonly Observer[]
}

export function fanOut(
  observers: readonly Observer[],
  info: ObservedLimiterInfo,
  logger: Logger | false,
): Emit {
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
  const list = observers.map((observer) => observer.observe.bind(observer))
  if (list.length === 1) {
    const only = list[0]!
    return (event) => {
      try {
        only(event)
      } catch (error) {
        failed(error)
      }
    }
  }
  return (event) => {
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(event)
      } catch (error) {
        failed(error)
      }
    }
  }
}
