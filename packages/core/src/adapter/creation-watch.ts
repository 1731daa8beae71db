import { type Clock, systemClock } from '../clock.js'
import { createWarnOnce, type WarningOptions } from '../warnings.js'
import type { Enter } from './framework-shape.js'

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
 * Costs nothing per request: the kit's `enter` is swapped out after its first requests.
 */
export const PER_REQUEST_KITS = 10
export const PER_REQUEST_WINDOW_MS = 60_000

/** The kit made last among those watched, in this copy of the module. */
let newest: unknown
/** Kits counted as single-use since `windowStart`, less those that served a second request. */
let singleUse = 0
let windowStart = Number.NaN
let warned = false

/**
 * The `enter` of a kit that builds its own limiter on the default memory store, until its first
 * requests are seen: whether the kit was made for this one request, then the plain `enter` put
 * back, so that later requests pay nothing for it.
 */
export function firstEntry<Req, Res, Exchange>(
  kit: { enter: Enter<Req, Res, Exchange> },
  options: WarningOptions & { readonly clock?: Clock | undefined },
): Enter<Req, Res, Exchange> {
  const enter = kit.enter
  newest = kit
  // Made in a request handler, a kit meets its request in the task that made it; an app's
  // middleware, set up before it serves, never does. A resolved promise tells the two apart
  // without a timer.
  let madeInThisTask = true
  void Promise.resolve().then(() => (madeInThisTask = false))
  return function first(req, res) {
    kit.enter = enter
    // Counted while it is still the newest kit made, until it serves a second request.
    if (madeInThisTask && newest === kit) {
      // Its first request, counted at its clock's time (NaN when the clock fails).
      let now = Number.NaN
      try {
        now = (options.clock ?? systemClock).now()
      } catch {
        // A broken clock is the limiter's to report.
      }
      if (!(now >= windowStart && now - windowStart <= PER_REQUEST_WINDOW_MS)) {
        windowStart = now
        singleUse = 0
      }
      if (++singleUse >= PER_REQUEST_KITS && !warned) {
        warned = true
        createWarnOnce(options)(
          'WARN_LIMITER_PER_REQUEST',
          '10 rate limiters were each made for one request within 60 s, so none limits: make rateLimit(rules) once, outside any handler',
        )
      }
      kit.enter = (req, res) => {
        if (singleUse > 0) singleUse--
        kit.enter = enter
        return enter(req, res)
      }
    }
    return enter(req, res)
  }
}
