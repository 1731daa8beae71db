import type { Limiter, Verdict } from '../limiter/types.js'
import { isPromise } from './middleware.js'

/**
 * True when a request may hold slots of `limiter` in flight: one of its rules is a concurrency
 * rule, or it is a limiter of the app's own that can release them.
 */
export function releasesSlots(limiter: Limiter): boolean {
  if (typeof limiter.release !== 'function') return false
  return limiter.rules.some((rule) => rule.algorithm === 'concurrency')
}

/**
 * Gives back the slots an admitted request holds once its exchange is over. Nothing may escape
 * from there: the limiter reports store failures itself (`onError`). Returns the pending release
 * of an asynchronous store, if any.
 */
export function releaseQuietly(limiter: Limiter, verdict: Verdict): Promise<void> | undefined {
  try {
    const done = limiter.release?.(verdict)
    return isPromise(done) ? done.then(undefined, () => {}) : undefined
  } catch {
    return undefined
  }
}

/** One pending promise for two that may be undefined (a release and a refund). */
export function bothPending(
  first: Promise<void> | undefined,
  second: Promise<void> | undefined,
): Promise<void> | undefined {
  if (first === undefined) return second
  if (second === undefined) return first
  return Promise.all([first, second]).then(() => undefined)
}
