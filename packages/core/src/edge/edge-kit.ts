import type { UserId } from '../adapter/middleware.js'
import type { AlgorithmTable } from '../algorithms/table.js'
import { type Clock, systemClock } from '../clock.js'
import type { HeaderAccessor } from '../headers/types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/create-limiter.js'
import { isPromiseLike } from '../limiter/engine.js'
import { DEFAULT_STORE_TIMEOUT_MS } from '../limiter/store-deadline.js'
import type { Logger, MaybePromise, StoreErrorContext, Verdict } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'
import type { Store } from '../store/types.js'
import { type EdgeEngine, edgeDecide } from './edge-decide.js'
import { type EdgeIdentityOptions, edgeIdentities } from './edge-identities.js'
import { checkEdgeOptions, customIdentitiesOf } from './edge-options.js'
import { createEdgeReporter, edgeClock } from './edge-report.js'
import { createEdgeResponder, type EdgeAnswer, type EdgeResponseOptions } from './edge-responder.js'
import { compileEdgeRules } from './edge-rules.js'
import { edgeStore } from './edge-store.js'

/** How the edge kit reads a framework's request. */
export type EdgeFramework<Req> = {
  readonly method: (req: Req) => string
  readonly socketAddress: (req: Req) => string | undefined
  readonly header: (req: Req, name: string) => ReturnType<HeaderAccessor>
  /** Where the framework's auth middleware leaves the user, when the app gives no `user` hook. */
  readonly user: (req: Req) => UserId
  /** Options of the adapter's own that must be functions when given (e.g. `getConnInfo`). */
  readonly hooks: readonly string[]
}

/** The options of an edge middleware: a subset of `@tollgate/hono`'s, which answers alike. */
export type EdgeOptions<Req> = EdgeResponseOptions &
  EdgeIdentityOptions & {
    /** The algorithms rules may name, e.g. `{ token_bucket: tokenBucket }`: only these are bundled. */
    readonly algorithms: AlgorithmTable
    /** Where state lives. @default a store deciding as `mapStore()` does, in fewer bytes */
    readonly store?: Store | undefined
    /** @default systemClock */
    readonly clock?: Clock | undefined
    /** Where warnings go, or `false` for nowhere. @default globalThis.console */
    readonly logger?: Logger | false | undefined
    /** Called when the store fails; each rule's `onStoreError` decides the request. */
    readonly onError?: ((error: unknown, context: StoreErrorContext) => void) | undefined
    /** `Retry-After` of a fail-closed denial, in ms. @default 1000 */
    readonly storeErrorRetryAfterMs?: number | undefined
    /** How long an asynchronous store is awaited before it counts as failed. @default 1000 */
    readonly storeTimeoutMs?: number | false | undefined
    /** Identities the `identities` hook provides besides `ip`, `api_key` and `user`. */
    readonly customIdentities?: readonly string[] | undefined
    /** Requests for which this returns true are not counted or limited at all. */
    readonly skip?: ((req: Req) => boolean) | undefined
    /** The authenticated user's id, for rules keyed on `user`. */
    readonly user?: ((req: Req) => UserId) | undefined
    /** The client's plan, for rules that match on `plan`. */
    readonly plan?: ((req: Req) => string | undefined) | undefined
    /** Identities of your own, for rules that key on them (declare them in `customIdentities`). */
    readonly identities?: ((req: Req) => Record<string, string | undefined>) | undefined
    /** The app's own answer to a denial (called by the adapter). */
    readonly onLimited?: unknown
  }

/**
 * One per middleware: decides a request (`undefined` when `skip` says so), synchronously when the
 * store is, and answers it with the fields and the denial `@tollgate/hono` would send.
 */
export type EdgeKit<Req> = (req: Req) => MaybePromise<EdgeAnswer> | undefined

/**
 * Builds an edge middleware's kit: the rules, options and framework checked here, at start-up,
 * every refusal naming the rule or option and the field. Deciding (`edgeDecide`) gives
 * `decideRequest`'s verdicts, store-failure reports and fail-open/closed.
 */
export function createEdgeKit<Req>(
  rules: readonly RuleConfig[],
  options: EdgeOptions<Req>,
  framework: EdgeFramework<Req>,
): EdgeKit<Req> {
  const hooks = ['skip', 'user', 'plan', 'identities', 'onLimited', ...framework.hooks]
  checkEdgeOptions(options as unknown as Record<string, unknown>, hooks)
  const compiled = compileEdgeRules(rules, options.algorithms, [
    'ip',
    'api_key',
    'user',
    ...customIdentitiesOf(options.customIdentities),
  ])
  const store = options.store ?? edgeStore()
  const timeoutMs = store.timeoutMs
  const reporter = createEdgeReporter(
    options.logger ?? defaultLogger(),
    options.onError,
    options.ignoreWarnings,
  )
  const engine: EdgeEngine = {
    store,
    reporter,
    storeErrorRetryAfterMs: options.storeErrorRetryAfterMs ?? DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
    // A store with a budget of its own (Redis) is not timed twice.
    storeTimeoutMs:
      options.storeTimeoutMs ??
      (typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0
        ? false
        : DEFAULT_STORE_TIMEOUT_MS),
  }
  const readClock = edgeClock(options.clock ?? systemClock, reporter)
  const keysOn = (name: string) => compiled.some((rule) => rule.identity.includes(name))
  const identitiesOf = edgeIdentities(options, keysOn('api_key'), reporter.warnCode)
  const user = keysOn('user') ? (options.user ?? framework.user) : undefined
  const { skip, plan, identities } = options
  const respond = createEdgeResponder(options, options.onLimited !== undefined)

  return function enter(req) {
    if (skip?.(req)) return undefined
    const own = identitiesOf(
      framework.socketAddress(req),
      (name) => framework.header(req, name),
      user?.(req),
    )
    const all = identities === undefined ? own : { ...own, ...identities(req) }
    const given = plan?.(req)
    const method = framework.method(req).toUpperCase()
    // As `buildRuleIndex` selects rules naming no route, in rule order: by plan (no plan given
    // matches no rule naming plans, which are strings), and by method read in upper case, GET
    // covering HEAD.
    const matched = compiled.filter(
      ({ plans, methods }) =>
        (plans === undefined || plans.includes(given as string)) &&
        (methods === undefined ||
          methods.includes(method) ||
          (method === 'HEAD' && methods.includes('GET'))),
    )
    // A clock that fails is decided like a store that fails: each rule's onStoreError.
    const verdict: MaybePromise<Verdict> = edgeDecide(engine, matched, all, ...readClock())
    return isPromiseLike(verdict) ? (verdict as Promise<Verdict>).then(respond) : respond(verdict)
  }
}

function defaultLogger(): Logger | false {
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}
