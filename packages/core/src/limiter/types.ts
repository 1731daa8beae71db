import type { AlgorithmTable } from '../algorithms/table.js'
import type { QuotaPolicy } from '../algorithms/types.js'
import type { Clock } from '../clock.js'
import type { Decision } from '../decision.js'
import type { Duration, Rule, RuleConfig, WidenedRulesError } from '../rules/types.js'
import type { Store } from '../store/types.js'
import type { Timers } from '../wait/scheduler.js'
import type { Logger } from '../warnings.js'
import type { AccessLists } from './access-lists.js'
import type { FiguresOption } from './figures-option.js'

export type { Logger } from '../warnings.js'

/**
 * What the limiter needs to know about a request. Adapters build it; nothing here is
 * framework-specific. Identities are already derived and trusted (the client IP resolved
 * through trusted proxies, the API key read from its header, the authenticated user).
 */
export type RequestFacts = {
  /** Upper-case HTTP method, e.g. `POST`. */
  readonly method: string
  /** The request path without the query string, e.g. `/v1/labels:batch`. */
  readonly path: string
  /** The client's plan, when the app knows it (rules may match on it). */
  readonly plan?: string | undefined
  /** Identity name → value, e.g. `{ ip: '203.0.113.7', api_key: 'k_123', user: 'u_9' }`. */
  readonly identities: Readonly<Record<string, string | undefined>>
}

/** A rule's decision, as the adapters need it for headers and logs. */
export type RuleDecision = Decision & {
  /** The rule id. */
  readonly rule: string
  readonly mode: 'enforce' | 'shadow'
  /** The cost this request was charged (or would have been) under this rule. */
  readonly cost: number
  /** The rule's quota policy, for the RateLimit-Policy field. */
  readonly policy: QuotaPolicy
  /**
   * The key the rule counted this request under (e.g. `api_key:k_123`), for logs and refunds.
   * Always set by the limiter, except on a missing-identity denial, where there is no key.
   */
  readonly key?: string
  /**
   * True on a decision the limiter made up because the store failed: a fail-closed denial
   * (`retryAfterMs` is the limiter's `storeErrorRetryAfterMs`) or, from `check`, a fail-open
   * admission (figures are those of a fresh key). Its figures describe no real state.
   */
  readonly storeFailed?: boolean
  /**
   * Set on a denial by a rule's `penalty`: until when (ms since the epoch) the key is blocked
   * under the rule. Its `retryAfterMs` reaches at least that far.
   */
  readonly blockedUntil?: number
  /** With `blockedUntil`: the offences the store remembers for the key under the rule. */
  readonly offences?: number
  /**
   * True on a decision made in this process while the store failed (`onStoreError: 'fallback'`):
   * real figures of the process's share of the rule (`limit` is that share), not the store's.
   */
  readonly degraded?: true
}

/** Why a request was denied. */
export type DenyReason =
  /** An enforcing rule's limit. */
  | 'limit'
  /** The store failed and a fail-closed rule matched. */
  | 'store-unavailable'
  /**
   * A rule keys on an identity the request lacks, and is configured to refuse it. Its decision
   * has no `retryAfterMs`: waiting does not help, sending the identity does.
   */
  | 'missing-identity'
  /**
   * A rule's `penalty` blocks the client (after this denial, or an earlier one): answered 429,
   * with `Retry-After` at the block's end (or later, if the quota is not back by then).
   */
  | 'blocked'
  /** Blocked, and the client's offences reached the rule's `forbidAfter`: answered 403. */
  | 'forbidden'
  /** The client is on the deny list (`lists`): answered 403, before any store call. */
  | 'deny-list'

/**
 * The `detail` and `code` of the 403 problem a part answers a client it refuses outright with:
 * the deny list (`deny-list`), a penalty's `forbidAfter` (`forbidden`). Carried by the verdict
 * that part builds, so that an app without the part sends none of its texts.
 */
export type Refusal = { readonly detail: string; readonly code: string }

/** The limiter's answer for a whole request, over every rule that matched it. */
export type Verdict = {
  readonly allowed: boolean
  /** Set when denied. */
  readonly reason: DenyReason | undefined
  /**
   * Set on a denial by the deny list or a penalty's `forbidAfter` (reasons `deny-list`,
   * `forbidden`): the responder answers it 403 with this `detail` and `code`, naming the
   * violated policies and when to retry only when a rule decided it (`deciding`).
   */
  readonly refusal?: Refusal | undefined
  /** One decision per matching rule, in rule order (enforcing and shadow). */
  readonly decisions: readonly RuleDecision[]
  /**
   * The most restrictive decision: when denied, the denying enforcing rule with the longest
   * retry; when allowed, the enforcing rule with the fewest remaining. Undefined when no rule
   * matched.
   */
  readonly deciding: RuleDecision | undefined
  /** Shadow rules that would have denied this request (reported, never enforced). */
  readonly shadowDenied: readonly RuleDecision[]
  /** The time (ms since the epoch) the store decided at. */
  readonly at: number
  /**
   * Set on an admission that must wait for its slot in a queue rule (`leaky_queue`): the longest
   * `delayMs` among the enforcing rules, in ms from `at`. `acquire` and the adapters wait it out;
   * `decide` leaves that to the caller (`hold`). Shadow rules never add to it. On the verdict
   * `hold` serves, times until reset count from the slot, `at + waitMs`.
   */
  readonly waitMs?: number | undefined
  /**
   * Set on a refusal whose refusing rules are concurrency rules with a `queue`: `acquire` and the
   * adapters wait in the line for a slot (`hold`), and serve the request decided again once one
   * comes, or this refusal when the line is full or the wait is over (`maxWait`); `decide` leaves
   * that to the caller.
   */
  readonly waitsForSlot?: true | undefined
  /** Set by `release` once it gave this admission's concurrency slots back (it does so once). */
  readonly slotsReleased?: true | undefined
  /**
   * True when the store failed for this request. Fail-open: allowed, with no decisions from the
   * store (send no quota headers). Fail-closed: denied with reason `store-unavailable`, the
   * decisions being made-up denials of the fail-closed rules.
   */
  readonly storeFailed?: boolean
}

/** @default 1000: a fail-closed denial asks clients to come back in a second. */
export const DEFAULT_STORE_ERROR_RETRY_AFTER_MS = 1000

/** What failed, passed to `onError` with the store's error. */
export type StoreErrorContext = {
  readonly operation: 'consume' | 'refund' | 'settle'
  /** The ids of the rules whose charges the store was asked to apply. */
  readonly rules: readonly string[]
  /** True when a fail-closed enforcing rule turned the failure into a denial. */
  readonly failClosed: boolean
  /**
   * The rules (`onStoreError: 'fallback'`) decided in this process instead, with their share of
   * the allowance: their decisions are marked `degraded`. Not in `rules`.
   */
  readonly fallback?: readonly string[]
}

/**
 * `R` is the type of the rules given, inferred by `createLimiter` only to refuse an array whose
 * `algorithm` widened to `string` with the fix (see `WidenedRulesError`).
 */
export type LimiterOptions<R = readonly RuleConfig[]> = {
  /** Rules in code (`RuleConfig`) or as validated by `defineRules` / `parseRules`. */
  readonly rules: readonly RuleConfig[] | (R & WidenedRulesError<R>)
  /** Where state lives. @default memoryStore() */
  readonly store?: Store
  /**
   * The algorithms rules may name, e.g. `{ token_bucket: tokenBucket }`: a rule naming another
   * is refused at start-up. @default every built-in algorithm
   */
  readonly algorithms?: AlgorithmTable
  /**
   * Where the time comes from. A fraction is floored, so a monotonic clock works:
   * `{ now: () => performance.timeOrigin + performance.now() }`. A clock that throws or returns
   * something that is not a time is decided like a store failure (`ERR_RL_CLOCK_FAILED`, each
   * rule's `onStoreError`), never an error for the request.
   * @default systemClock (`Date.now()`)
   */
  readonly clock?: Clock
  /**
   * The timers that wake waiting requests (a queued request, one waiting for a concurrency slot):
   * one timer at a time for all of them, read against `clock`. Inject them with the clock to test
   * waiting without sleeping. @default the runtime's `setTimeout` and `clearTimeout`
   */
  readonly timers?: Timers
  /**
   * Receives warnings, each distinct one once, as `[tollgate] CODE: message`; `false` silences
   * them. @default globalThis.console
   */
  readonly logger?: Logger | false
  /**
   * Called when the store throws or rejects; the request is then decided by each matching rule's
   * `onStoreError`. Use it to count and alert. @default a warning through `logger`, once per
   * distinct message
   */
  readonly onError?: (error: unknown, context: StoreErrorContext) => void
  /**
   * `retryAfterMs` of a fail-closed denial: how long clients are told to wait while the store is
   * down. Short, since nobody knows when it will be back. @default 1000
   */
  readonly storeErrorRetryAfterMs?: number
  /**
   * How long to wait for an asynchronous store (not the memory store) before deciding as if it
   * had failed (each rule's `onStoreError`, reported as `ERR_RL_STORE_UNAVAILABLE`). `false`
   * waits as long as the store takes. @default 1000, or none for a store with a `timeoutMs` of
   * its own (the Redis store), which is then the only budget
   */
  readonly storeTimeoutMs?: number | false
  /**
   * The identities your code provides besides the built-in `ip`, `api_key` and `user` (an
   * adapter's `identities` hook, or `RequestFacts.identities`), e.g. `['account']`. Rules may
   * key only on built-in and declared names, so that a misspelt one (`apikey`) is refused at
   * start-up instead of missing from every request and falling back to the IP. @default []
   */
  readonly customIdentities?: readonly string[] | undefined
  /**
   * Allow and deny lists by identity value or IP network, from `accessLists({ allow, deny })`:
   * decided before any store call, an allowed client passes without a charge or a field, a
   * denied one is refused (403). @default none
   */
  readonly lists?: AccessLists | undefined
  /**
   * Per-client figures, by rule id: a rule's limit, rate, burst or window looked up per client
   * (the plan of an API key read from a database), remembered for `cacheFor`. A client whose
   * figures change carries its state by the rule's `onChange`. Memory store only, for now.
   * See docs/guides/per-client-figures.md.
   * @example { 'per-key': { of: async ({ plan }) => PLANS[plan ?? 'free'], cacheFor: '5m' } }
   * @default none: every client under each rule's own figures
   */
  readonly figures?: FiguresOption | undefined
}

/** `limiter.check`'s options: what to charge, and when. */
export type CheckOptions = {
  /** Units to charge; 0 inspects without charging. @default the rule's `cost` */
  readonly cost?: number
  /** Ms since the epoch (a fraction is floored). @default clock.now() */
  readonly now?: number
}

/**
 * `limiter.decide`'s options: when, and what a request with a `settle` rule is expected to cost.
 */
export type DecideOptions = {
  /** Ms since the epoch (a fraction is floored). @default clock.now() */
  readonly now?: number
  /**
   * What the request is expected to cost, in units, under the rules with `settle` it matches
   * (e.g. the `max_tokens` of a body the app parsed): charged there instead of the rule's cost,
   * as a reservation for `settle` to correct. Other rules charge their cost. A whole number
   * ≥ 0; one above a matching rule's capacity throws `ERR_RL_COST_EXCEEDS_CAPACITY` (it could
   * never pass). @default each rule's `cost` (or `costByRoute`)
   */
  readonly estimate?: number
}

/** The options of an operator's call: the time it is made at. */
export type OperatorOptions = {
  /** Ms since the epoch (a fraction is floored). @default clock.now() */
  readonly now?: number
}

/** What `peek` reports of one key under one rule. */
export type KeyReport = {
  /** A look at cost 0: what is left and when the key is full again, as a request would see it. */
  readonly decision: RuleDecision
  /** Offences remembered under the rule's penalty (0 without one). */
  readonly offences: number
  /** Until when (ms since the epoch) the key is blocked, or undefined when it is not. */
  readonly blockedUntil: number | undefined
  /** The time the store looked at. */
  readonly at: number
}

/**
 * What an operator does to one client, on the limiter's store (an admin route's calls), from
 * `limiterOperations(limiter)`. Keys
 * are as `check` takes them (`ip:203.0.113.7`, `api_key:k_123`); a rule id the limiter does not
 * know throws `ERR_RL_UNKNOWN_RULE`, a store without the method `ERR_RL_STORE_UNSUPPORTED`. A
 * store that fails rejects (or throws) with its error: an operator hears about it. Charging is
 * `check(key, rule, { cost })`.
 */
export interface LimiterOperations {
  /** The key's state as a cost-0 request sees it, and its block. Writes nothing, creates nothing. */
  peek(key: string, ruleId: string, options?: OperatorOptions): MaybePromise<KeyReport>
  /** Forgets the key's state and its offences: its next request finds it fresh. */
  reset(key: string, ruleId: string, options?: OperatorOptions): MaybePromise<void>
  /** Gives `units` back to the key now, as far as its state holds them (a whole number ≥ 0). */
  giveBack(
    key: string,
    ruleId: string,
    units: number,
    options?: OperatorOptions,
  ): MaybePromise<void>
  /**
   * Blocks the key under a rule with a `penalty` for `duration` from now (`'15m'`, or whole ms
   * ≥ 1): refused as a penalty's block is, its offences kept.
   */
  block(
    key: string,
    ruleId: string,
    duration: Duration | number,
    options?: OperatorOptions,
  ): MaybePromise<void>
  /** Lifts the key's block under the rule and forgets its offences. */
  unblock(key: string, ruleId: string, options?: OperatorOptions): MaybePromise<void>
}

/** `limiter.settle`'s options. */
export type SettleOptions = {
  /** Ms since the epoch (a fraction is floored). @default clock.now() */
  readonly now?: number
}

/**
 * What a settle did:
 * - `settled`: the store has the actual costs (of the rules in `settled`);
 * - `closed`: the verdict was settled, cancelled or refunded before: nothing done;
 * - `expired`: every reserved rule's time to settle had passed: their estimates stand;
 * - `none`: nothing was reserved (a denial, a store that failed, no rule with `settle`);
 * - `store-failed`: the store failed (reported to `onError`): the estimates stand.
 */
export type SettleStatus = 'settled' | 'closed' | 'expired' | 'none' | 'store-failed'

/** What `limiter.settle` did, and to which rules. */
export type SettleResult = {
  readonly status: SettleStatus
  /** The rules whose charges now hold the actual costs. */
  readonly settled: readonly string[]
  /** The reserved rules whose time to settle had passed: their estimates stand. */
  readonly expired: readonly string[]
}

/** What `AbortSignal` offers that a wait reads: any runtime's signal fits. */
export type WaitSignal = {
  readonly aborted: boolean
  readonly reason: unknown
  /** Called once per wait, with `{ once: true }`. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  /** Called when the wait ends before the signal aborts. */
  removeEventListener(type: 'abort', listener: () => void): void
}

/** What a wait for a queue or concurrency slot reads: the signal that cancels it. */
export type HoldOptions = {
  /**
   * Gives up waiting when it aborts (the client went away): the request's charges are given back
   * (`refund`, so its queue slot goes to the next arrival, and `release`, its concurrency slots)
   * and the wait rejects with its reason. A request waiting for a concurrency slot leaves its
   * line (it holds nothing yet).
   */
  readonly signal?: WaitSignal | undefined
}

/** `limiter.acquire`'s options: `decide`'s, and the signal that cancels the wait. */
export type AcquireOptions = DecideOptions & HoldOptions

/** Synchronous when the store is (the memory store), a promise otherwise. */
export type MaybePromise<T> = T | Promise<T>

/**
 * What `createLimiter` returns: decides requests over its rules, charges keys directly, and
 * settles, refunds and releases what it charged. The adapters wrap one; use it directly for a job
 * queue, a WebSocket or anything that is not an HTTP middleware.
 * @example
 * const limiter = createLimiter({
 *   rules: [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }],
 * })
 * const verdict = await limiter.decide({ method: 'GET', path: '/', identities: { ip: '203.0.113.7' } })
 * if (!verdict.allowed) console.log(verdict.deciding?.retryAfterMs)
 */
export interface Limiter {
  /** The validated rules, in order. */
  readonly rules: readonly Rule[]
  readonly store: Store
  /**
   * How many times the clock read earlier than before (an NTP correction stepping it back), the
   * first logged as `WARN_CLOCK_STEPPED_BACK`. A monotonic clock never does. Times given as
   * `now` options are not counted.
   */
  readonly clockStepsBack: number
  /**
   * Decides one rule for one key: `key` is used as given, so `check('ip:203.0.113.7', 'r')`
   * shares state with requests that `decide` keys on that IP. Throws `ERR_RL_UNKNOWN_RULE`,
   * `ERR_RL_INVALID_COST` or `ERR_RL_COST_EXCEEDS_CAPACITY`; a store failure follows the rule's
   * `onStoreError`. A middleware's own limiter (an adapter kit's `limiter`, which no app holds)
   * has no `check` and no `acquire`.
   */
  check(key: string, ruleId: string, options?: CheckOptions): MaybePromise<RuleDecision>
  /**
   * Decides a request over every rule that matches it, as one unit: a denied request consumes
   * nothing. Never throws a store error (see `onStoreError`).
   */
  decide(facts: RequestFacts, options?: DecideOptions): MaybePromise<Verdict>
  /**
   * Decides a request as `decide` does, then, for an admission that must wait for its slot in a
   * queue rule, resolves at that slot (`hold`). A denial resolves at once. One timer serves every
   * waiting request of the limiter, and none is armed while nothing waits.
   */
  acquire(facts: RequestFacts, options?: AcquireOptions): Promise<Verdict>
  /**
   * Waits out an admitted verdict's `waitMs` and resolves with the verdict as served (times until
   * reset counted from its slot); resolves at once with the verdict itself when it has no wait.
   * A refusal marked `waitsForSlot` first waits in its line for a concurrency slot and resolves
   * with the request decided again (an admission holding the slot), or with the refusal. See
   * `HoldOptions.signal` for a client that goes away.
   */
  hold(verdict: Verdict, options?: HoldOptions): Promise<Verdict>
  /**
   * Gives back what an admitted request was charged, as far as it still counts (nothing once a
   * fixed window has rolled over). Does nothing for a denied verdict, or twice for one verdict.
   */
  refund(verdict: Verdict, options?: DecideOptions): MaybePromise<void>
  /**
   * Gives back the slots an admitted request holds under its concurrency rules: call it once the
   * response has ended, however it ended (the adapters do). Does nothing for a denied verdict,
   * one without slots, or twice for one verdict. `refund` never gives slots back. Optional, for
   * limiters of an app's own without concurrency rules.
   */
  release?(verdict: Verdict, options?: DecideOptions): MaybePromise<void>
  /**
   * Replaces an admission's estimates with what it really cost, under every rule with `settle`
   * it was charged on, in one store call: units are given back when it cost less, charged on
   * top when it cost more (the key may go into debt and wait until it is repaid). `actual` is
   * one cost for every such rule, or costs by rule id (rules not named keep their estimates).
   * Once per verdict (a second settle, a cancel or a refund after it does nothing), within each
   * rule's `settle` time. Throws for a bad cost (`ERR_RL_INVALID_COST`) or an unknown rule
   * (`ERR_RL_UNKNOWN_RULE`); a store failure never throws (see `SettleResult`). Optional, for
   * limiters of an app's own.
   */
  settle?(
    verdict: Verdict,
    actual: number | Readonly<Record<string, number>>,
    options?: SettleOptions,
  ): MaybePromise<SettleResult>
  /**
   * Gives an admission's reservation back whole (`settle` with an actual cost of 0): for a
   * request that ended before it cost anything. Charges of rules without `settle` stay; `refund`
   * gives everything back. Optional, as `settle`.
   */
  cancel?(verdict: Verdict, options?: SettleOptions): MaybePromise<SettleResult>
  /**
   * Changes the rules while running. They are validated as at start-up: a set that fails is
   * refused whole (the same `RuleValidationError` or `RateLimitError` is thrown, logged as
   * `WARN_RULES_UPDATE_REFUSED` and counted in `updatesRefused`) and the running rules stay. A
   * valid set takes over at once: each request is decided entirely under the old rules or the
   * new. A rule that keeps its id but changes its figures carries each key's state by its
   * `onChange`; added rules start fresh, removed rules' states are dropped. A promise when the
   * store answers later. Optional: absent on a limiter composed without it.
   * @example limiter.update(defineRules([{ ...free, burst: 40 }]))
   */
  update?(rules: readonly RuleConfig[], options?: UpdateOptions): MaybePromise<RulesUpdate>
  /** How many `update` calls were refused since the limiter was made. */
  readonly updatesRefused?: number
  /**
   * How many per-client figure lookups (`figures`) failed or gave figures the rule refuses; the
   * clients were decided under the figures they had, or the rule's own. Set with `figures`.
   */
  readonly figuresRefused?: number
}

/**
 * For a middleware's kit, which serves the rules as it was made: a rule it cannot serve is
 * refused as a validation error is (thrown, logged, counted, the running rules kept).
 */
export type UpdateOptions = {
  /** False for an identity the middleware does not read (it reads only its rules' own). */
  readonly reads?: (identity: string) => boolean
  /** False when the middleware does not give concurrency slots back at a response's end. */
  readonly releasesSlots?: boolean
  /**
   * False for a rule whose requests' slots and waits the caller does not follow (an observed
   * limiter follows those of the concurrency and queue rules it was made with).
   */
  readonly follows?: (rule: Rule) => boolean
}

/** What `limiter.update` changed, by rule id. */
export type RulesUpdate = {
  readonly added: readonly string[]
  readonly removed: readonly string[]
  /** Kept their id, changed their figures: their keys' states carried by `onChange`. */
  readonly changed: readonly string[]
  /** The same figures: their keys' states kept as they are. */
  readonly unchanged: readonly string[]
}
