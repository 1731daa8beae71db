import type { Limiter, Verdict } from '../limiter/types.js'

/**
 * True when a request may hold slots of `limiter` in flight: one of its rules is a concurrency
 * rule, or it is a limiter of the app's own that can release them.
 */
export function releasesSlots(limiter: Limiter): boolean {
  return (
    typeof limiter.release === 'function' &&
    limiter.rules.some((rule) => rule.algorithm === 'concurrency')
  )
}

/**
 * Gives back what an admitted request holds once its exchange is over: its slots in flight
 * (`release`), else its charge (the app's `refund` said so). Nothing may escape from there: the
 * limiter reports store failures itself (`onError`), and has nothing else to throw for a verdict
 * it made. Returns the pending work of an asynchronous store, if any.
 */
export function giveBack(
  limiter: Limiter,
  verdict: Verdict,
  release?: true,
): Promise<void> | undefined {
  try {
    const done: unknown = release ? limiter.release?.(verdict) : limiter.refund(verdict)
    if (typeof (done as { then?: unknown } | undefined)?.then === 'function') {
      return Promise.resolve(done as PromiseLike<void>).then(undefined, () => {})
    }
  } catch {
    // Reported by the limiter.
  }
  return undefined
}
