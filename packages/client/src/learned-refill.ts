import type { ReadPolicy } from '@tollgate/core/fields'

/**
 * How a learned policy's spent units come back before its reset: `quota` units per `windowMs`,
 * none before `from`, never more than `capacity` held. Integers throughout: a level is kept in
 * units × `windowMs`, to which every ms adds `quota`.
 */
export type Refill = {
  readonly quota: number
  readonly windowMs: number
  readonly capacity: number
  readonly from: number
  /** The rate is a smoothed window's, which holds units back until the next window starts. */
  readonly smoothed: boolean
}

/**
 * The rate a smoothed window (the sliding window counter) can be spent at for good, as units per
 * ms: `quota` per `windowMs`. The counter estimates the previous window's units as spread evenly
 * and adds the call itself, so a client paced at exactly `q` per `w` meets that estimate's
 * rounding and is refused now and then. Paced at `q − 1` per window, every window holds `q − 1`
 * calls and the estimate stays a unit below; 10/11 of the rate is below that from `q = 11` on
 * and leaves a margin for the rounding of larger quotas. A quota of 1 passes one call every
 * other window: the previous window's call weighs until the window ends.
 */
function smoothedRate(quota: number, windowMs: number): { quota: number; windowMs: number } {
  if (quota >= 11) return { quota: quota * 10, windowMs: windowMs * 11 }
  return quota >= 2 ? { quota: quota - 1, windowMs } : { quota: 1, windowMs: windowMs * 2 }
}

/**
 * Units a smoothed window's response may hold beyond what the client's flow brought back and
 * still agree with it: between two calls the server gives back up to a unit more than the flow
 * at its lowered rate, and `r` counts whole units.
 */
const FLOW_SLACK_UNITS = 2

/**
 * What the fields tell of the units coming back before `t`. `t` is delta-seconds rounded up,
 * so it is only a bound: the quota is full again by `t`, perhaps up to a second sooner; a
 * policy whose units come back one by one returns the first long before. Undefined when
 * nothing comes back before `t` as far as the client can tell (it then waits for `t`):
 *
 * - **A burst beside the quota** (`tollgate-burst`, draft 6/7 `burst`): a rate rule, a bucket
 *   of `burst` refilled at `q` per `w` from now. A bucket's `t` is the time to fill it, which
 *   for a burst below the quota is under a second and is sent as a whole one.
 * - **`t` beyond `w`**: a quota that takes more than its window to come back is smoothed over
 *   the windows (the sliding window counter): units return at the rate during the window that
 *   ends at `t`, so from `t − w` at the latest. Once they flow, a later response (which says
 *   `t` beyond `w` again, as long as the client keeps spending) does not stop them, as long as
 *   it agrees with the flow. After a window with no call (`previousAt`, the client's last call
 *   or answer, a window or more ago), a response holding many more units than the flow brought
 *   back (`previousUnits`, what the client thinks is left) may hold them because that window
 *   passed idle, not because they flowed: those units, spent, come back only as the next window
 *   runs, so the flow starts again from this response's `t − w`. While the client calls within
 *   every window, more units than it counted came back with the flow (whose start, `t − w` with
 *   `t` in whole seconds, can be up to a second late).
 * - **Otherwise** (a fixed window, a sliding log, a bucket whose burst is its quota): a fixed
 *   window gives nothing back before its end, and the fields cannot tell it from the others;
 *   waiting for `t` costs the others little, as they are full again only at `t` too.
 */
export function refillOf(
  policy: ReadPolicy,
  resetMs: number,
  now: number,
  previous: Refill | undefined,
  previousUnits = 0,
  previousAt = now,
): Refill | undefined {
  const { quota, windowMs, burst } = policy
  if (quota === undefined || windowMs === undefined || quota === 0) return undefined
  if (burst !== undefined && burst > 0) {
    return { quota, windowMs, capacity: burst, from: now, smoothed: false }
  }
  if (resetMs <= windowMs) return undefined
  const flowing =
    previous?.smoothed === true &&
    previous.from <= now &&
    ((policy.remaining ?? 0) <= previousUnits + FLOW_SLACK_UNITS || now - previousAt < windowMs)
  return {
    ...smoothedRate(quota, windowMs),
    capacity: quota,
    from: flowing ? previous.from : now + resetMs - windowMs,
    smoothed: true,
  }
}

/** The level (units × `refill.windowMs`) at `now` of one that was `level` at `at`. */
export function levelAt(level: number, at: number, refill: Refill, now: number): number {
  const since = now - Math.max(at, refill.from)
  if (since <= 0) return level
  return Math.min(refill.capacity * refill.windowMs, level + since * refill.quota)
}

/** Ms from `now` until a level that was `level` at `at` holds `cost` units (0: it does). */
export function msUntil(level: number, at: number, refill: Refill, cost: number, now: number) {
  const need = cost * refill.windowMs - levelAt(level, at, refill, now)
  if (need <= 0) return 0
  // Past `from` the level has been brought up to now; before it, it waits for `from`.
  const start = Math.max(now, refill.from)
  return start - now + Math.ceil(need / refill.quota)
}
