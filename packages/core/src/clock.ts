/**
 * Where the limiter reads the time. Inject one to test without sleeping (a manual clock) or to
 * share a clock with the rest of the app.
 */
export type Clock = {
  /** Milliseconds since the epoch; a fraction is floored. */
  now(): number
}

/**
 * The wall clock, the default: windows start at multiples of their length since the epoch (a day
 * at 00:00 UTC), which a monotonic clock drifts away from over a long uptime. `Date.now()` can
 * step when NTP corrects it; such a step costs a key at most its rule's reset span and hands out
 * nothing (see `Algorithm.decide`), and the limiter counts steps back (`clockStepsBack`).
 */
export const systemClock: Clock = { now: () => Date.now() }
