import type { WarnOnce } from '../warnings.js'

/**
 * Notices middleware built inside a request handler
 * (`app.get('/', (req, res, next) => rateLimit(rules)(req, res, next))`): each request then
 * meets a new limiter with an empty memory store, and nothing is ever limited.
 *
 * The sign: a kit that meets its first request in the very task that made it (before any
 * promise made then could settle) while it is still the newest kit made, and never serves a
 * second. An app builds its middleware before it serves (a test suite building an app per case
 * sends its request later, after an await), and a middleware made at start-up soon serves
 * another request.
 * When `PER_REQUEST_KITS` such kits meet their first request within `PER_REQUEST_WINDOW_MS` of
 * one another (by the kits' own clocks), `WARN_LIMITER_PER_REQUEST` is raised, once per process.
 * A kit that serves a second request is no longer counted: kits made lazily (one per tenant),
 * whose clients come back, do not add up. Only kits that build their own limiter on the default
 * memory store are watched: with a limiter or a store of the app's own, state is shared and a
 * kit made per request still limits.
 *
 * Costs nothing per request: the kit calls `firstRequest` and `secondRequest` from the entries
 * it swaps out after them.
 */
export const PER_REQUEST_KITS = 10
export const PER_REQUEST_WINDOW_MS = 60_000

/** Kits made, in this copy of the module. */
let made = 0
/** Kits counted as single-use since `windowStart`, less those that served a second request. */
let singleUse = 0
let windowStart = Number.NaN
let warned = false

/** Records a kit being made; its serial number, for `firstRequest`. */
export function kitMade(): number {
  made += 1
  return made
}

/**
 * A watched kit's first request, at `now` by its clock. True when it counts as single-use (it is
 * still the newest kit): pass that to `secondRequest`.
 */
export function firstRequest(serial: number, now: number, warn: WarnOnce): boolean {
  if (serial !== made) return false
  if (!(now >= windowStart && now - windowStart <= PER_REQUEST_WINDOW_MS)) {
    windowStart = now
    singleUse = 0
  }
  singleUse += 1
  if (singleUse >= PER_REQUEST_KITS && !warned) {
    warned = true
    warn(
      'WARN_LIMITER_PER_REQUEST',
      `${singleUse} rate limiters were each made and used for one request within ${PER_REQUEST_WINDOW_MS / 1000} s: a limiter made inside a request handler starts empty every time and never limits. Make it once and mount it: const limit = rateLimit(rules); app.use(limit) (or app.get(path, limit, handler))`,
    )
  }
  return true
}

/** A kit's second request: it was not made for one request only. */
export function secondRequest(counted: boolean): void {
  if (counted && singleUse > 0) singleUse -= 1
}
