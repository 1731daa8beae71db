/**
 * Where the limiter reads the time. Inject one to test without sleeping (a manual clock) or to
 * share a clock with the rest of the app.
 */
export type Clock = {
  /** Whole milliseconds since the epoch. */
  now(): number
}

/**
 * The wall clock. `Date.now()` can step back when NTP corrects it; the algorithms hold such a
 * step at the last time they saw instead of handing out tokens for it.
 */
export const systemClock: Clock = { now: () => Date.now() }
