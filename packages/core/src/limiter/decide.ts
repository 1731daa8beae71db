import { MAX_TIME_MS } from '../algorithms/integer.js'
import { wholeTime } from '../algorithms/step.js'
import type { Clock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import { invalidOption } from '../options/option-values.js'
import { composedWithout } from '../rules/issues.js'
import type { Charge, Outcome } from '../store/types.js'
import type { ListCheck } from './access-lists.js'
import { chargeOf } from './admitted-charges.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
import { CLOCK_FAILED, messageOf } from './report.js'
import type { RuleIndex } from './rule-index.js'
import { replyWithin } from './store-deadline.js'
import type { DecideOptions, MaybePromise, RequestFacts, RuleDecision, Verdict } from './types.js'
import { combine, madeUpDecision, NONE, replyError, shown, storeDecision } from './verdict.js'

// A request's way through the limiter: the time, the rules that match it, their keys and costs,
// one store call, and the verdict read from the store's reply.

type Identities = RequestFacts['identities']

/** A method with a character other than A-Z: upper-cased (without allocating for the rest). */
const NOT_UPPER_CASE = /[^A-Z]/

/** What deciding a request needs of the limiter's setup (built once by `createLimiter`). */
type DeciderSetup = {
  /** The time of a request, and the engine to decide it with (`reader.engine`). */
  readonly reader: ClockReader
  /** The allow and deny lists (`lists`), when given. */
  readonly lists: ListCheck | undefined
  /** The rules by method and path: read once per request (an update swaps it). */
  readonly index: RuleIndex
}

/**
 * Decides a request one of whose `matched` rules takes per-client figures, with the client's
 * own (`decideWith` decides the rules it is given); undefined when none of them does.
 */
export type FiguresHook = (
  matched: readonly CompiledRule[],
  facts: RequestFacts,
  now: number,
  decideWith: (rules: readonly CompiledRule[]) => MaybePromise<Verdict>,
) => MaybePromise<Verdict> | undefined

/**
 * `Limiter.decide`: matches a request to its rules and decides them as one unit. `markWaiting`
 * marks refusals that wait in a line for a concurrency slot, when a rule has one; `figures`
 * decides rules that take per-client figures (`figures`), when given.
 */
export function requestDecider(
  setup: DeciderSetup,
  markWaiting: ((verdict: MaybePromise<Verdict>) => MaybePromise<Verdict>) | undefined,
  figures: FiguresHook | undefined,
): (facts: RequestFacts, given?: DecideOptions) => MaybePromise<Verdict> {
  const { reader: clock, lists } = setup
  return function decide(facts, given) {
    const now = clock.read(given?.now)
    // Read once: the request is decided under the rules it started with, whatever an update does.
    const index = setup.index
    const deciding = clock.engine
    if (lists !== undefined) {
      // Before any store call: a listed client is neither charged nor told any figure.
      const listed = lists(facts.identities, now)
      if (listed !== undefined) return listed
    }
    // Adapters pass upper case; a lower-case method must not slip past the limits. Tested only
    // when a rule reads it: no regex per request for rules that name no method.
    const requested = facts.method
    const method =
      index.readsMethod && NOT_UPPER_CASE.test(requested) ? requested.toUpperCase() : requested
    const path = index.normalizePath?.(facts.path) ?? facts.path
    const byMethod = index.byMethod?.get(method) ?? index.unnamed
    const { rules, patterns } = byMethod.byPath?.get(path) ?? byMethod.other
    const plan = facts.plan
    let first: CompiledRule | undefined
    let matched: CompiledRule[] | undefined
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!
      const plans = rule.plans
      if (plans !== undefined && (plan === undefined || !plans.includes(plan))) continue
      // The method match of a limiter without routes (route matching's index has matched it).
      const methods = rule.methods
      if (methods !== undefined && !methods.includes(method)) continue
      const routePatterns = patterns[i]
      if (routePatterns !== undefined && !index.matchesAny!(routePatterns, path)) continue
      if (first === undefined) first = rule
      else if (matched === undefined) matched = [first, rule]
      else matched.push(rule)
    }
    if (first === undefined) return combine(NONE, now)
    let verdict: MaybePromise<Verdict> | undefined
    const estimate = given?.estimate
    if (figures !== undefined) {
      verdict = figures(matched ?? [first], facts, now, (own) =>
        decideAll(deciding, own, facts.identities, method, path, now, estimate),
      )
    }
    if (
      verdict === undefined &&
      matched === undefined &&
      deciding.consumeOne !== undefined &&
      first.penalty === undefined
    ) {
      // One rule, a synchronous store: no arrays but the verdict's own, no promise. `combine`
      // of one decision allocates what a builder for one would: the verdict and its array.
      const key = keyOf(first, facts.identities)
      if (key !== undefined && key !== UNKNOWN_CLIENT_KEY) {
        // The cost as decideAll reads it (inline: no call on the one-rule path of every request).
        const costs = first.costs
        const cost =
          costs === undefined ? first.cost : costs.costOf(method, path, first.cost, estimate)
        try {
          const reply = deciding.consumeOne(first.id, first.algorithm, key, cost, now)
          verdict = combine([storeDecision(first, reply, cost, key)], now)
        } catch (error) {
          verdict = storeFailure(deciding, onePending(first, key, cost), error, now)
        }
      }
    }
    verdict ??= decideAll(
      deciding,
      matched ?? [first],
      facts.identities,
      method,
      path,
      now,
      estimate,
    )
    return markWaiting === undefined ? verdict : markWaiting(verdict)
  }
}

/**
 * A request's rules in rule order, each with its charge, or with its denial when the request
 * lacks an identity the rule keys on: every verdict's decisions are read off it in that order.
 */
export type Pending = {
  readonly rules: readonly CompiledRule[]
  /** Per rule (same index): its charge, or its missing-identity denial. */
  readonly plan: readonly (Charge | RuleDecision)[]
  /** The charges of `plan`, in order, as the store is sent them. */
  readonly charges: readonly Charge[]
  /** True when a charge carries a rule's penalty: the store's `consumePenalised` decides. */
  readonly penalised: boolean
}

/** The decision of a charged rule (`n`: its charge's place among `charges`), or none. */
type ChargedDecision = (rule: CompiledRule, charge: Charge, n: number) => RuleDecision | undefined

/** The charge of one rule for one key: a store call that failed. */
function onePending(rule: CompiledRule, key: string, cost: number): Pending {
  const charges = [chargeOf(rule, key, cost)]
  return { rules: [rule], plan: charges, charges, penalised: false }
}

/**
 * The decision of one rule for one key whose store call failed, by its `onStoreError`: decided
 * in this process, denied (fail-closed), or admitted with a fresh key's figures (fail-open).
 */
export function failedOne(
  engine: Engine,
  rule: CompiledRule,
  key: string,
  cost: number,
  now: number,
  error: unknown,
): RuleDecision {
  const made = storeFailure(engine, onePending(rule, key, cost), error, now).decisions[0]
  return made ?? madeUpDecision(rule, true, cost, key)
}

function decideAll(
  engine: Engine,
  rules: readonly CompiledRule[],
  identities: Identities,
  method: string,
  path: string,
  now: number,
  estimate?: number,
): MaybePromise<Verdict> {
  const count = rules.length
  const plan: (Charge | RuleDecision)[] = new Array(count)
  let missing = false
  let refused = false
  let penalised = false
  for (let i = 0; i < count; i++) {
    const rule = rules[i]!
    // Its estimate when the rule settles, else by route.
    const costs = rule.costs
    const cost = costs === undefined ? rule.cost : costs.costOf(method, path, rule.cost, estimate)
    const key = keyOf(rule, identities)
    if (key === undefined) {
      plan[i] = madeUpDecision(rule, false, cost)
      missing = true
      if (!rule.shadow) refused = true
      continue
    }
    if (key === UNKNOWN_CLIENT_KEY) {
      engine.reporter.warnOnce(
        'WARN_SHARED_CLIENT_BUCKET',
        `rule "${rule.id}": requests without an ip identity share one bucket`,
      )
    }
    plan[i] = chargeOf(rule, key, cost)
    if (rule.penalty !== undefined) penalised = true
  }
  // The plan itself when every rule is charged: no second array.
  const charges = missing ? plan.filter((step) => 'algorithm' in step) : (plan as Charge[])
  const pending: Pending = { rules, plan, charges, penalised }
  // Refused, or only shadow rules lacking their identity (then admitted, the reason unread).
  if (refused || charges.length === 0) {
    return combine(
      inRuleOrder(pending, () => undefined),
      now,
      'missing-identity',
    )
  }
  return consumeAll(engine, pending, now)
}

/** Charges a request's rules to the store as one unit and reads the reply into a verdict. */
export function consumeAll(engine: Engine, pending: Pending, now: number): MaybePromise<Verdict> {
  let outcome: MaybePromise<Outcome>
  try {
    outcome = pending.penalised
      ? engine.store.consumePenalised!(pending.charges, now)
      : engine.store.consume(pending.charges, now)
    if (isPromiseLike(outcome)) {
      // Adopted (Promise.resolve in replyWithin), not outcome.then: a thenable's own `then` may
      // throw, call back twice or return anything. Inside the try, since reading `then` (or a
      // promise's `constructor`) can throw too.
      return replyWithin(outcome, engine.storeTimeoutMs, 'consume').then(
        (reply) => verdictOfReply(engine, pending, reply, now),
        (error: unknown) => storeFailure(engine, pending, error, now),
      )
    }
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return verdictOfReply(engine, pending, outcome, now)
}

/** Turns the store's reply into a verdict; a reply that is not one is a store failure. */
function verdictOfReply(engine: Engine, pending: Pending, outcome: Outcome, now: number): Verdict {
  const count = pending.charges.length
  let made: RuleDecision[]
  let at: number
  // Everything read from the reply is read here, once, into the limiter's own objects, which
  // are then checked: a getter or proxy in the reply that throws is caught like a bad figure.
  try {
    const decisions = outcome?.decisions
    const answered = Array.isArray(decisions) ? decisions.length : 'no'
    if (answered !== count) {
      throw replyError(`the store answered ${answered} decisions for ${count} charges`)
    }
    at = outcome.at
    // `at` places X-RateLimit-Reset and is handed back to the store by refund as `chargedAt`.
    if (!Number.isSafeInteger(at) || at < 0 || at > MAX_TIME_MS) {
      throw replyError(`the store answered at ${shown(at)}, expected whole ms since the epoch`)
    }
    made = inRuleOrder(pending, (rule, charge, n) =>
      storeDecision(rule, decisions[n], charge.cost, charge.key),
    )
    if (pending.penalised) return engine.penalties!.verdict(pending.rules, made, outcome, at)
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return combine(made, at)
}

/**
 * The store failed: each charged enforcing rule's `onStoreError` decides. Any fail-closed one
 * denies the request; otherwise the rules that fall back, if any, decide it in this process
 * (local fallback), and the rest pass, with no figures to report.
 */
function storeFailure(engine: Engine, pending: Pending, error: unknown, now: number): Verdict {
  const { rules, plan } = pending
  const charged = rules.filter((_, i) => 'algorithm' in plan[i]!)
  const failClosed = charged.some((rule) => rule.failClosed)
  const local = failClosed
    ? undefined
    : engine.localFallback?.decide(engine, pending, charged, error, now)
  if (local !== undefined) return local
  engine.reporter.storeError(
    error,
    'consume',
    charged.map((rule) => rule.id),
    failClosed,
  )
  const decisions = inRuleOrder(pending, (rule, charge) =>
    rule.failClosed
      ? madeUpDecision(rule, false, charge.cost, charge.key, engine.storeErrorRetryAfterMs)
      : undefined,
  )
  return combine(decisions, now, failClosed ? 'store-unavailable' : 'limit', true)
}

/** The missing-identity denials with the charged rules' decisions `decide` makes, in rule order. */
export function inRuleOrder(pending: Pending, decide: ChargedDecision): RuleDecision[] {
  const { rules, plan } = pending
  // Sized up front and cut short if need be: a push onto an empty array allocates room for 17.
  const decisions: RuleDecision[] = new Array(plan.length)
  let made = 0
  let charged = 0
  for (let i = 0; i < plan.length; i++) {
    const step = plan[i]!
    const d = 'algorithm' in step ? decide(rules[i]!, step, charged++) : step
    if (d !== undefined) decisions[made++] = d
  }
  decisions.length = made
  return decisions
}

/**
 * The key the shared bucket of requests without any client IP is counted under: a rule never
 * lets a request through unlimited because the adapter could not tell who sent it.
 */
export const UNKNOWN_CLIENT_KEY = 'ip:'

/** The one key of a rule keyed on no identity (a concurrency limit for the whole process). */
const PROCESS_KEY = '*'

/**
 * The store key of a request under a rule, or undefined when the request lacks an identity the
 * rule keys on and the rule refuses such requests.
 *
 * - one identity: `name:value`, e.g. `api_key:k_123` (a name holds no `:`, so the value is
 *   everything after the first one);
 * - several: `name#length:value` per identity, joined by `&`, e.g.
 *   `account#5:alice&ip#11:203.0.113.7`; the lengths make any value content unambiguous;
 * - none (a rule for the whole process): `PROCESS_KEY`;
 * - fallback when an identity is missing: `ip:<client ip>`, or `UNKNOWN_CLIENT_KEY`.
 *
 * An empty string counts as missing: it would put every such request in one bucket unnoticed.
 */
export function keyOf(
  rule: CompiledRule,
  identities: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const names = rule.identity
  if (names.length === 1) {
    const value = identities[names[0]!]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    // A hot key is built once: the same string also keeps its hash cached for the store.
    const cache = rule.lastKey
    if (cache.value === value) return cache.key
    const key = rule.keyPrefix + value
    cache.value = value
    cache.key = key
    return key
  }
  let key = ''
  for (const name of names) {
    const value = identities[name]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    // Joined by `&` after the first (`key` is never empty after one).
    key += `${key && '&'}${name}#${value.length}:${value}`
  }
  // Empty only for a rule keyed on no identity (a name is never empty).
  return key || PROCESS_KEY
}

function fallbackKey(
  rule: CompiledRule,
  identities: { readonly ip?: string | undefined },
): string | undefined {
  if (rule.denyMissingIdentity) return undefined
  // Without a client IP (none, or empty): `UNKNOWN_CLIENT_KEY`, the IP key of an empty IP.
  return `ip:${identities.ip ?? ''}`
}

/**
 * The time of a call, as whole ms: the one it gives, else the clock's, noticing when the clock
 * steps back (the memory store and the algorithms clamp such a step: it hands out nothing);
 * and the engine to make the call with. With `clockReader`, a clock that fails is decided like
 * a store that fails: the call is placed at the latest time read, and its engine fails every
 * store call with the clock's error, so each rule's `onStoreError` decides.
 */
export type ClockReader = {
  /**
   * The time given (whole ms, a fraction floored; a bad one is the caller's bug and throws), or
   * the clock's, or, when the clock failed, the latest time read (0 before any).
   */
  read(given: number | undefined): number
  /**
   * The engine of the call last read: the limiter's, or, when the clock failed, one failing every
   * store call with the clock's error (its `failure`).
   */
  readonly engine: Engine
  /** How many readings were earlier than the one before (a step back, such as an NTP fix). */
  readonly stepsBack: number
}

/** A limiter's time reader, from its `clock` option, its engine and whether `onError` is set. */
export type ReadsClock = (clock: Clock | undefined, engine: Engine, hooked: boolean) => ClockReader

/**
 * The time reader of a limiter composed without `clockReader`: `Date.now()` read directly (it
 * neither throws nor gives anything but whole ms), a step back counted and warned about once.
 * A `clock` given is refused, naming the part.
 */
export const systemTime: ReadsClock = (clock, engine) => {
  if (clock !== undefined) throw invalidOption('clock', composedWithout('clock: clockReader'))
  const reader = {
    stepsBack: 0,
    engine,
    latest: 0,
    read(given: number | undefined): number {
      if (given !== undefined) return wholeTime(given)
      const now = Date.now()
      if (now < reader.latest) {
        reader.stepsBack++
        engine.reporter.warnOnce('WARN_CLOCK_STEPPED_BACK', 'the clock stepped back')
      }
      reader.latest = now
      return now
    },
  }
  return reader
}

/**
 * The limiter's time reader (the `clockReader` part of `createRateLimit`, which a `clock`
 * option needs): the clock given, else `Date.now()`, each reading checked. `hooked`: an
 * `onError` hook hears of each call the clock failed, else one warning says it failed.
 */
export function clockReader(
  clock: Clock | undefined,
  engine: Engine,
  hooked: boolean,
): ClockReader {
  const reporter = engine.reporter
  const failed = (message: string, cause?: unknown): number => {
    const failure = new RateLimitError('ERR_RL_CLOCK_FAILED', message, { cause })
    const fail = (): never => {
      throw failure
    }
    // The engine with a store that fails every call with the clock's error (every failure it
    // reports is the clock's).
    reader.engine = {
      ...engine,
      consumeOne: undefined,
      store: { consume: fail, refund: fail, settle: fail, consumePenalised: fail },
      failure,
      reporter: hooked
        ? reporter
        : { ...reporter, storeError: () => reporter.warnOnce('WARN_CLOCK_FAILED', CLOCK_FAILED) },
    }
    return reader.latest
  }
  const reader = {
    latest: 0,
    stepsBack: 0,
    engine,
    read(given: number | undefined): number {
      reader.engine = engine
      if (given !== undefined) {
        return wholeTime(given)
      }
      let value: unknown
      try {
        // `Date.now` reads no `this`: the system clock, called as the clock given is.
        value = (clock ?? Date).now()
      } catch (error) {
        return failed(`clock.now() threw: ${messageOf(error)}`, error)
      }
      if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIME_MS)) {
        return failed(`clock.now() returned ${shown(value)}, expected ms since the epoch`)
      }
      const now = Math.floor(value)
      if (now < reader.latest) {
        reader.stepsBack++
        reporter.warnOnce('WARN_CLOCK_STEPPED_BACK', 'the clock stepped back')
      }
      reader.latest = now
      return now
    },
  }
  return reader
}
