import type { Limiter, Verdict } from '../limiter/types.js'

// What an admitted request holds is given back once its exchange is over: its slots in flight,
// and its charge when the app's `refund` says so. Nothing may escape from there: the limiter
// reports store failures itself (`onError`), and has nothing else to throw for a verdict it
// made. Each returns the pending work of an asynchronous store, if any.

/**
 * True when a request may hold slots of `limiter` in flight: one of its rules is a concurrency
 * rule, or it is a limiter of the app's own that can release them.
 */
export function releasesSlots(limiter: Limiter): boolean {
  if (typeof limiter.release !== 'function') return false
  return limiter.rules.some((rule) => rule.algorithm === 'concurrency')
}

/** Gives back the slots an admitted request holds. */
export function releaseQuietly(limiter: Limiter, verdict: Verdict): Promise<void> | undefined {
  try {
    return quietly(limiter.release?.(verdict))
  } catch {
    return undefined
  }
}

/** Gives an admitted request's charge back once its response is known. */
export function refundQuietly(limiter: Limiter, verdict: Verdict): Promise<void> | undefined {
  try {
    return quietly(limiter.refund(verdict))
  } catch {
    return undefined
  }
}

/** The pending work of an asynchronous store, its failure already reported by the limiter. */
function quietly(done: unknown): Promise<void> | undefined {
  if (typeof (done as { then?: unknown } | undefined)?.then !== 'function') return undefined
  return Promise.resolve(done as PromiseLike<void>).then(undefined, () => {})
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
