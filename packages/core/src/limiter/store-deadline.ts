import { RateLimitError } from '../errors.js'

/** @default 1000: how long an asynchronous store reply is awaited before it counts as failed. */
export const DEFAULT_STORE_TIMEOUT_MS = 1000

type Timer = { unref?(): void }
type Timers = {
  setTimeout(callback: () => void, ms: number): Timer
  clearTimeout(timer: Timer): void
}
// Reached structurally: core compiles without DOM or Node types. Every runtime we support has them.
const timers = globalThis as unknown as Timers

/**
 * An asynchronous store reply, or `ERR_RL_STORE_UNAVAILABLE` once `timeoutMs` has passed without
 * one: a store that hangs (a lost connection nobody noticed, a locked table) then follows each
 * rule's `onStoreError` instead of holding every request for as long as it hangs. A reply that
 * comes later is ignored; whatever the store did with it (a charge taken) stays done.
 * `Promise.resolve` adopts the reply, so a thenable's own `then` is called once, by the promise
 * machinery; the caller reads `then` inside its own try (reading it can throw).
 */
export function replyWithin<T>(
  reply: PromiseLike<T>,
  timeoutMs: number | false,
  operation: 'consume' | 'refund' | 'settle',
): Promise<T> {
  const settled = Promise.resolve(reply)
  if (timeoutMs === false) return settled
  return new Promise<T>((resolve, reject) => {
    const timer = timers.setTimeout(() => {
      reject(
        new RateLimitError(
          'ERR_RL_STORE_UNAVAILABLE',
          `the store did not answer ${operation} within ${timeoutMs} ms (storeTimeoutMs)`,
        ),
      )
    }, timeoutMs)
    // A Node timer keeps the process alive; this one must not delay a shutdown.
    timer.unref?.()
    // Whichever comes first settles the promise; the timer is cleared either way.
    settled.then(resolve, reject).finally(() => timers.clearTimeout(timer))
  })
}
