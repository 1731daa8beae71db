import { CLIENT_IP_KINDS } from '../identity/client-ip.js'
import type { IdentityOptions, UserId } from '../identity/identities.js'
import { LIMITER_OPTIONS } from '../limiter/option-names.js'
import type { LimiterOptions, Logger, Verdict } from '../limiter/types.js'
import type { ForeignOptions } from '../options/foreign-options.js'
import { checkOptionValues, FUNCTION, type OptionKind, shown } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { RESPONDER_KINDS, type ResponderOptions } from '../response/responder.js'
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
// unknown one can be refused, with what each value must be (`checkOptionValues`): the identity's
// and the response's as their factories check them, 0 for those checked as they are read
// (`trustProxy`) or not at all. Typed as a record of the option types' keys: adding an option
// to a type without listing it here does not compile.
const OWN_OPTIONS: {
  readonly [K in
    | Exclude<keyof CoreOptions, keyof LimiterOptions>
    | keyof RequestHooks<unknown>
    | 'onLimited']-?: OptionKind | 0
} = {
  trustProxy: 0,
  proxyHeader: 0,
  ...CLIENT_IP_KINDS,
  ignoreWarnings: 0,
  // Checked by the `apiKeys` part (`apiKeyIdentity`), refused by a middleware without it.
  apiKeyHeader: 0,
  bearerAsApiKey: 0,
  maxApiKeyLength: 0,
  ...RESPONDER_KINDS,
  skip: FUNCTION,
  user: FUNCTION,
  plan: FUNCTION,
  identities: FUNCTION,
  refund: (value) =>
    value === 'failed' || value === 'succeeded' || typeof value === 'function'
      ? undefined
      : `expected 'failed', 'succeeded' or a function, got ${shown(value)}`,
  onShadowDenied: FUNCTION,
  // What `loadShedder` returns: bound to the clock when the kit is made.
  shed: (value) =>
    typeof (value as LoadShedder<unknown> | null)?.bind === 'function'
      ? undefined
      : 'expected loadShedder({ ... })',
  debugHeader: FUNCTION,
  estimate: FUNCTION,
  // What `settleFrom` returns; a function has a `bind` of its own: `settle: usageReader` is no settler.
  settle: (value) =>
    typeof value !== 'function' && typeof (value as ResponseSettler | null)?.bind === 'function'
      ? undefined
      : 'expected settleFrom(...)',
  onLimited: FUNCTION,
}

/**
 * Checks an adapter's options at start-up, not on the first request: an option no adapter
 * knows (`trustproxy`, express-rate-limit's `windowMs`) is refused with the one meant, and each
 * value the kit, the identities and the response read is checked (`OWN_OPTIONS`), the
 * adapter's own hooks (Hono's `getConnInfo`) as functions; the limiter checks its own.
 * Of the kit's parts: `foreignOptions`, the other limiters' options to answer;
 * `missingIdentity`, that option's check, in its place (`missingIdentityStatus`, or a composed
 * middleware's refusal when made without that part).
 */
export function checkAdapterOptions(
  options: object,
  adapterHooks: readonly string[],
  {
    foreignOptions,
    missingIdentity,
  }: {
    readonly foreignOptions?: ForeignOptions | undefined
    readonly missingIdentity: OptionKind
  },
): void {
  const known = [
    ...LIMITER_OPTIONS.filter((name) => name !== 'rules'),
    ...Object.keys(OWN_OPTIONS),
    ...adapterHooks,
  ]
  refuseUnknownOptions(options, known, 'rateLimit()', foreignOptions)
  checkOptionValues(options, { ...OWN_OPTIONS, missingIdentity })
  for (const name of adapterHooks) checkOptionValues(options, { [name]: FUNCTION })
}

/** The limiter's own options out of an adapter's, for `createLimiter`. */
export function limiterOptionsOf(options: object): Partial<LimiterOptions> {
  const picked: Record<string, unknown> = {}
  for (const name of LIMITER_OPTIONS) {
    if (name in options) picked[name] = (options as Record<string, unknown>)[name]
  }
  return picked
}
