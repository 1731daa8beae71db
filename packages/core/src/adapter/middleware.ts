import { RateLimitError } from '../errors.js'
import type { FieldWriter } from '../headers/types.js'
import {
  compileIdentities,
  type Identities,
  type IdentityOptions,
  type IdentityResolver,
  type IdentitySource,
} from '../identity/identities.js'
import { type ProxyTrust, trustedProxies } from '../identity/proxy-trust.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type {
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  RequestFacts,
  Verdict,
  WaitSignal,
} from '../limiter/types.js'
import type { ForeignOptions } from '../options/foreign-options.js'
import { ADAPTER_OPTIONS, limiterOptionsOf } from '../options/option-names.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import {
  createResponder,
  type LimitResponse,
  type Responder,
  type ResponderOptions,
} from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import type { LoadShedder } from './shed.js'

// What the adapter kit (kit.ts) builds once per middleware, and the small helpers it uses: the
// limiter, identities and responder behind one decision. Adapters use the kit, not these.

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
 * A request's response, and the verdict behind it; `verdict` is undefined when the limiter
 * refused the request outright (a cost that can never fit).
 */
export type Handled = { readonly response: LimitResponse; readonly verdict: Verdict | undefined }

/** A user id as authentication middleware leaves it; anything else counts as no user. */
export type UserId = string | number | null | undefined

/**
 * The user id in what auth middleware stores for a request (Passport's `req.user`, koa-passport's
 * `ctx.state.user`, Hono's `c.get('user')`): an id itself, or an object with an `id`. Anything
 * else is no user.
 */
export function userIdOf(user: unknown): UserId {
  if (typeof user === 'string' || typeof user === 'number') return user
  if (typeof user === 'object' && user !== null) {
    const id = (user as { readonly id?: unknown }).id
    if (typeof id === 'string' || typeof id === 'number') return id
  }
  return undefined
}

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
}

/** The hook names `checkHooks` checks for every adapter. */
export const REQUEST_HOOKS = [
  'skip',
  'user',
  'plan',
  'identities',
  'onLimited',
  'onShadowDenied',
  'debugHeader',
]

/** How a middleware reads a request: the app's hooks, or the framework's default for the user. */
export type RequestReaders<Req> = {
  readonly user: (req: Req) => UserId
  readonly plan: ((req: Req) => string | undefined) | undefined
  readonly identities: ((req: Req) => Record<string, string | undefined>) | undefined
}

/**
 * The readers a middleware uses: the app's hooks, else the framework's default for the user. The
 * user is not read at all when no rule keys on it (`gate.readsUser`): finding no `req.user` walks
 * the request's whole prototype chain, on every request.
 */
export function requestReaders<Req>(
  hooks: Pick<RequestHooks<Req>, 'user' | 'plan' | 'identities'>,
  defaultUser: (req: Req) => UserId,
  gate: Pick<Tollgate, 'readsUser'>,
): RequestReaders<Req> {
  const user = gate.readsUser ? (hooks.user ?? defaultUser) : noUser
  return { user, plan: hooks.plan, identities: hooks.identities }
}

function noUser(): UserId {
  return undefined
}

/** The parts of core one middleware instance uses, built once at start-up. */
export type Tollgate = {
  readonly limiter: Limiter
  readonly identities: IdentityResolver
  /**
   * A request's identities as the rules use them: `identities.identities`, except that no API
   * key is read when no rule keys on `api_key`. What adapters pass to `handle`.
   */
  readonly requestIdentities: (source: IdentitySource) => Identities
  /** Whether a rule may key on `user`; when none does, adapters never look the user up. */
  readonly readsUser: boolean
  readonly responder: Responder
  /**
   * Decides a request and builds its response: synchronous when the store is. A store failure is
   * already a verdict (fail-open or fail-closed); an error the client must hear about (a cost
   * that can never fit) becomes its response; anything else is thrown, for the framework.
   */
  readonly handle: (facts: RequestFacts, waiter?: Waiter) => MaybePromise<Handled>
  /**
   * As `handle`, except that an admitted request gets its verdict alone, for `writeFields`:
   * most requests then build no response at all.
   * Anything else (a denial, an error's response) gets the `Handled` that `handle` returns;
   * `isHandled` tells them apart.
   */
  readonly handleAdmitted: (facts: RequestFacts, waiter?: Waiter) => MaybePromise<Verdict | Handled>
  /**
   * Writes an admitted verdict's fields one by one: the entries `handle` would have put in
   * `response.headers`, in the same order, with the same values.
   */
  readonly writeFields: (verdict: Verdict, writer: FieldWriter) => void
}

/**
 * A request that may wait in a queue: `signal` is asked for only when it does, and aborts when
 * its client goes away.
 */
export type Waiter = { readonly signal: () => WaitSignal | undefined }

const SILENT: Logger = { warn() {} }

/** How a middleware builds its limiter: `createLimiter`, or a lean entry's `createLeanLimiter`. */
type LimiterFactory = (options: LimiterOptions) => Limiter

/**
 * What an entry builds into its middleware: the default entries everything, the lean ones only
 * what every app needs (the rest comes from the app's options, so that its bundle holds only
 * what it uses).
 */
export type EntryParts = {
  readonly makeLimiter: LimiterFactory
  /** How forwarding headers are read when the app passes no `proxies`. */
  readonly proxies: ProxyTrust
}

/** The default entries' parts. */
export const DEFAULT_PARTS: EntryParts = { makeLimiter: createLimiter, proxies: trustedProxies }

/**
 * Builds the limiter (or takes the one given), the identity resolver and the responder. All
 * validation happens here, so a bad rule or option fails at start-up, naming the rule and field.
 */
export function createTollgate(
  rules: readonly RuleConfig[] | Limiter,
  options: CoreOptions,
): Tollgate {
  return createTollgateWith(rules, options, DEFAULT_PARTS)
}

/**
 * `createTollgate` with an entry's parts: the lean entries pass `createLeanLimiter` and no
 * forwarding-header parser, so that their bundles reach no other algorithm than the app's, and
 * no proxy code unless the app passes it.
 */
export function createTollgateWith(
  rules: readonly RuleConfig[] | Limiter,
  options: CoreOptions,
  { makeLimiter, proxies }: EntryParts,
): Tollgate {
  const logger = options.logger
  const limiter = isLimiter(rules)
    ? rules
    : makeLimiter({
        ...limiterOptionsOf(options),
        rules,
        logger: logger === false ? SILENT : logger,
      })
  const responder = createResponder(options)
  const identities = compileIdentities(options, proxies)
  // A limiter of the app's own may read any identity; one built here reads only its rules'.
  const keysOn = (identity: string) =>
    isLimiter(rules) || limiter.rules.some((rule) => rule.match.identity.includes(identity))
  const readsApiKey = keysOn('api_key')

  function respondTo(verdict: Verdict): Handled {
    return { response: responder.respond(verdict, servedAt(verdict)), verdict }
  }

  function admittedOrRespond(verdict: Verdict): Verdict | Handled {
    return verdict.allowed ? verdict : respondTo(verdict)
  }

  /**
   * Decides a request and hands the verdict on, once a queued one's slot has come (or, refused
   * by a concurrency rule with a line, once a slot came or its wait is over); a refusal the
   * client must hear is answered. A waiting request whose client went away rejects with the
   * signal's reason.
   */
  function decideThen<T>(
    facts: RequestFacts,
    then: (verdict: Verdict) => MaybePromise<T>,
    waiter: Waiter | undefined,
  ): MaybePromise<T | Handled> {
    let verdict: MaybePromise<Verdict>
    try {
      verdict = limiter.decide(facts)
    } catch (error) {
      return refused(error)
    }
    if (isPromise(verdict)) {
      return verdict.then(
        (decided) => (waits(decided) ? held(decided, then, waiter) : then(decided)),
        refused,
      )
    }
    return waits(verdict) ? held(verdict, then, waiter) : then(verdict)
  }

  function held<T>(
    verdict: Verdict,
    then: (verdict: Verdict) => MaybePromise<T>,
    waiter: Waiter | undefined,
  ): Promise<T> {
    return limiter.hold(verdict, { signal: waiter?.signal() }).then(then)
  }

  function refused(error: unknown): Handled {
    const response = responder.respondToError(error)
    if (response === undefined) throw error
    return { response, verdict: undefined }
  }

  return {
    limiter,
    identities: { identities: identities.identities, clientIp: identities.clientIp },
    requestIdentities: readsApiKey ? identities.identities : identities.withoutApiKey,
    readsUser: keysOn('user'),
    responder,
    handle: (facts, waiter) => decideThen(facts, respondTo, waiter),
    handleAdmitted: (facts, waiter) => decideThen(facts, admittedOrRespond, waiter),
    writeFields: (verdict, writer) => responder.writeFields(verdict, servedAt(verdict), writer),
  }
}

/** True for a verdict to wait out: a queued admission, or a refusal waiting for a slot. */
function waits(verdict: Verdict): boolean {
  return verdict.waitMs !== undefined || verdict.waitsForSlot === true
}

/** When a request is answered: at its decision, or a queued one at its slot. */
function servedAt(verdict: Verdict): number {
  return verdict.waitMs === undefined ? verdict.at : verdict.at + verdict.waitMs
}

export function refundPredicate<Req>(
  when: RefundWhen<Req> | undefined,
): ((status: number, req: Req) => boolean) | undefined {
  if (when === undefined || typeof when === 'function') return when
  if (when === 'failed') return (status) => status >= 400
  if (when === 'succeeded') return (status) => status < 400
  throw invalidOption(
    'refund',
    `expected 'failed', 'succeeded' or a function, got ${JSON.stringify(when)}`,
  )
}

/**
 * Checks an adapter's options at start-up, not on the first request: an option no adapter
 * knows (`trustproxy`, express-rate-limit's `windowMs`) is refused with the one meant, and
 * hooks given as anything but a function are refused. `names` are the adapter's hooks,
 * including any beyond `REQUEST_HOOKS` (Hono's `getConnInfo`); `foreign`, the other limiters'
 * options to answer (none in the lean entries).
 */
export function checkHooks(
  options: object,
  names: readonly string[],
  foreign: ForeignOptions | undefined,
): void {
  refuseUnknownOptions(options, [...ADAPTER_OPTIONS, ...names], 'rateLimit()', foreign)
  for (const name of names) {
    const value = (options as Record<string, unknown>)[name]
    if (value !== undefined && typeof value !== 'function') {
      throw invalidOption(name, `expected a function, got ${typeof value}`)
    }
  }
}

function invalidOption(field: string, message: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `${field}: ${message}`, { field })
}

function isLimiter(value: readonly RuleConfig[] | Limiter): value is Limiter {
  return !Array.isArray(value) && typeof (value as Limiter).decide === 'function'
}

/**
 * Gives an admitted request's charge back once its response is known. Nothing may escape from
 * there: the limiter reports store failures itself (`onError`), and has nothing else to throw
 * for a verdict it made. Returns the pending refund of an asynchronous store, if any.
 */
export function refundQuietly(limiter: Limiter, verdict: Verdict): Promise<void> | undefined {
  try {
    const done = limiter.refund(verdict)
    return isPromise(done) ? done.then(undefined, () => {}) : undefined
  } catch {
    return undefined
  }
}

/** True for what `handleAdmitted` gives when it built a response: anything but a lone verdict. */
export function isHandled(outcome: Verdict | Handled): outcome is Handled {
  return (outcome as Partial<Handled>).response !== undefined
}

/** True for a promise (or any thenable): the store answered asynchronously. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
