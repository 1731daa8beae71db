import type { IdentityOptions, UserId } from '../identity/identities.js'
import { LIMITER_OPTIONS } from '../limiter/option-names.js'
import type { LimiterOptions, Logger, Verdict } from '../limiter/types.js'
import type { ForeignOptions } from '../options/foreign-options.js'
import { checkFunction } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import type { ResponderOptions } from '../response/responder.js'
import type { ResponseSettler } from './settle-from.js'
import type { LoadShedder } from './shed.js'

/**
 * Everything `@tollgate/core` lets you configure, in one flat object: the limiter's (`store`,
 * `clock`, `onError`…), the client identity's (`trustProxy`, `ipv6Prefix`, `apiKeyHeader`…) and
 * the response's (`standardHeaders`, `legacyHeaders`, `exposeHeaders`…). See
 * docs/reference/options.md.
 */
export type CoreOptions = Omit<LimiterOptions, 'rules' | 'logger'> &
  Omit<IdentityOptions, 'logger'> &
  ResponderOptions & {
    /**
     * Where warnings go (doubtful proxy settings, store failures), or `false` for nowhere.
     * @default globalThis.console
     */
    readonly logger?: Logger | false | undefined
  }

/**
 * Which finished requests give their charge back: `'failed'` (status ≥ 400, so a client is not
 * charged for your errors), `'succeeded'` (status < 400: count only failures, e.g. failed logins),
 * or a predicate of the status and the request.
 */
export type RefundWhen<Req> = 'failed' | 'succeeded' | ((status: number, req: Req) => boolean)

/**
 * The per-request hooks every adapter offers, typed by what the framework hands a middleware
 * (Express's `req`, Koa's `ctx`, Hono's `c`).
 */
export type RequestHooks<Req> = {
  /** Requests for which this returns true are not counted or limited at all (health checks…). */
  readonly skip?: ((req: Req) => boolean) | undefined
  /**
   * The authenticated user's id, for rules keyed on `user`.
   * @default where the framework's auth middleware leaves it: Express `req.user`, Koa
   * `ctx.state.user`, Hono `c.get('user')` (an id, or an object with an `id`)
   */
  readonly user?: ((req: Req) => UserId) | undefined
  /** The client's plan, for rules that match on `plan`. @default none */
  readonly plan?: ((req: Req) => string | undefined) | undefined
  /** Identities of your own, for rules that key on them (e.g. `account` for login limits). */
  readonly identities?: ((req: Req) => Record<string, string | undefined>) | undefined
  /** Give the charge back for requests that end this way. @default never */
  readonly refund?: RefundWhen<Req> | undefined
  /**
   * Called when shadow-mode rules would have denied the request (it is let through). If it throws
   * or rejects, that is logged (WARN_ON_SHADOW_DENIED_THREW) and the request still goes on.
   */
  readonly onShadowDenied?: ((verdict: Verdict, req: Req) => unknown) | undefined
  /**
   * Load shedding in front of the rules, made by `loadShedder({...})`: refuse work with a 503
   * while the process is overloaded (event-loop delay, requests in flight, your health probe).
   * See docs/concepts/where-to-enforce.md. @default none
   */
  readonly shed?: LoadShedder<Req> | undefined
  /**
   * Writes a `Tollgate-Debug` field explaining each verdict: give it `debugHeader(limiter,
   * { environment: process.env.NODE_ENV })` from `@tollgate/core/observe`, which is undefined
   * (off) outside development. @default none
   */
  readonly debugHeader?: ((verdict: Verdict) => string | undefined) | undefined
  /**
   * What the request is expected to cost under the rules with `settle` (e.g. the `max_tokens` of
   * a JSON body the app parsed before this middleware): reserved there instead of the rule's
   * `cost`, until the response settles it (`settle`). A whole number ≥ 0, or undefined for the
   * rule's cost; one above a rule's capacity is answered 400 (it could never pass).
   * @default each rule's `cost`
   */
  readonly estimate?: ((req: Req) => number | undefined) | undefined
  /**
   * Settles each admitted request from its response, made by `settleFrom(...)`: the usage an
   * LLM API reports (`settleFrom(usageReader())`) or a function of the response, for every rule
   * with `settle` or by rule id. See docs/concepts/charging-after-the-response.md. @default none:
   * reservations count as their estimates
   */
  readonly settle?: ResponseSettler | undefined
}

/**
 * The options the kit reads: core's, the request hooks, and whether the app answers denials
 * itself. `skip` is also handed the response, for frameworks that have one apart (Express).
 */
export type KitOptions<Req, Res> = CoreOptions &
  Omit<RequestHooks<Req>, 'skip'> & {
    /** Requests for which this returns true are not counted or limited at all (health checks…). */
    readonly skip?: ((req: Req, res: Res) => boolean) | undefined
    /** Called by the adapter; the kit only leaves `Content-Type` off an app's own answer. */
    readonly onLimited?: unknown
  }

// The options besides the limiter's (`LIMITER_OPTIONS`, less `rules`), by name, so that an
// unknown one can be refused; 1 for the hooks that must be functions when given (`refund`,
// `shed` and `settle` are checked apart). Typed as a record of the option types' keys: adding
// an option to a type without listing it here does not compile.
const OWN_OPTIONS: {
  readonly [K in
    | Exclude<keyof CoreOptions, keyof LimiterOptions>
    | keyof RequestHooks<unknown>
    | 'onLimited']-?: 0 | 1
} = {
  trustProxy: 0,
  proxyHeader: 0,
  ipv4Prefix: 0,
  ipv6Prefix: 0,
  ignoreWarnings: 0,
  apiKeyHeader: 0,
  bearerAsApiKey: 0,
  maxApiKeyLength: 0,
  legacyHeaders: 0,
  legacyReset: 0,
  standardHeaders: 0,
  shadowPolicies: 0,
  partitionKey: 0,
  exposeHeaders: 0,
  missingIdentity: 0,
  skip: 1,
  user: 1,
  plan: 1,
  identities: 1,
  refund: 0,
  onShadowDenied: 1,
  shed: 0,
  debugHeader: 1,
  estimate: 1,
  settle: 0,
  onLimited: 1,
}

/**
 * Checks an adapter's options at start-up, not on the first request: an option no adapter
 * knows (`trustproxy`, express-rate-limit's `windowMs`) is refused with the one meant, and
 * hooks given as anything but a function are refused. `adapterHooks` are the adapter's own
 * (Hono's `getConnInfo`); `foreign`, the other limiters' options to answer.
 */
export function checkAdapterOptions(
  options: object,
  adapterHooks: readonly string[],
  foreign: ForeignOptions | undefined,
): void {
  const adapterOwn = [...Object.keys(OWN_OPTIONS), ...adapterHooks]
  const known = [...LIMITER_OPTIONS.filter((name) => name !== 'rules'), ...adapterOwn]
  refuseUnknownOptions(options, known, 'rateLimit()', foreign)
  // The hooks: the options marked 1, then the adapter's own (none of them marked 0).
  for (const name of adapterOwn) {
    const value = (options as Record<string, unknown>)[name]
    if (value !== undefined && OWN_OPTIONS[name as keyof typeof OWN_OPTIONS] !== 0) {
      checkFunction(name, value)
    }
  }
}

/** The limiter's own options out of an adapter's, for `createLimiter`. */
export function limiterOptionsOf(options: object): Partial<LimiterOptions> {
  const picked: Record<string, unknown> = {}
  for (const name of LIMITER_OPTIONS) {
    if (name in options) picked[name] = (options as Record<string, unknown>)[name]
  }
  return picked
}
