import { MAX_FIELD_INTEGER, MAX_TIME_MS } from '../algorithms/integer.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import type { Charge, Outcome } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
import { keyOf, UNKNOWN_CLIENT_KEY } from './keys.js'
import type { RuleIndex } from './rule-index.js'
import { replyWithin } from './store-deadline.js'
import type { MaybePromise, RequestFacts, RuleDecision, Verdict } from './types.js'
import { combine, denial, emptyVerdict, ruleDecision, singleVerdict } from './verdict.js'

type Identities = RequestFacts['identities']

/** Matches a request to its rules and decides them as one unit (see `Limiter.decide`). */
export function decideRequest(
  engine: Engine,
  index: RuleIndex,
  facts: RequestFacts,
  now: number,
): MaybePromise<Verdict> {
  const path = index.normalizePath(facts.path)
  const bucket = index.buckets.get(facts.method) ?? index.lookup(facts.method)
  const candidates = bucket.byPath.get(path) ?? bucket.other
  const rules = candidates.rules
  const patterns = candidates.patterns
  const plan = facts.plan
  let first: CompiledRule | undefined
  let matched: CompiledRule[] | undefined
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!
    const plans = rule.plans
    if (plans !== undefined && (plan === undefined || !plans.includes(plan))) continue
    const routePatterns = patterns[i]
    if (routePatterns !== null && !index.matchesAny(routePatterns!, path)) continue
    if (first === undefined) first = rule
    else if (matched === undefined) matched = [first, rule]
    else matched.push(rule)
  }
  if (first === undefined) return emptyVerdict(now)
  const method = bucket.method
  if (matched === undefined && engine.consumeOne !== undefined) {
    const key = keyOf(first, facts.identities)
    if (key !== undefined && key !== UNKNOWN_CLIENT_KEY) {
      return decideOne(engine, first, key, costFor(first, method, path), now)
    }
  }
  return decideAll(engine, matched ?? [first], facts.identities, method, path, now)
}

function costFor(rule: CompiledRule, method: string | undefined, path: string): number {
  return rule.costs === undefined ? rule.cost : rule.costs.costOf(method, path, rule.cost)
}

/** One rule, a synchronous store: no arrays, no promise. */
function decideOne(engine: Engine, rule: CompiledRule, key: string, cost: number, now: number) {
  let decision: RuleDecision
  try {
    decision = storeDecision(
      rule,
      engine.consumeOne!(rule.id, rule.algorithm, key, cost, now),
      cost,
      key,
    )
  } catch (error) {
    const charge = { rule: rule.id, algorithm: rule.algorithm, key, cost, shadow: rule.shadow }
    const pending = { matched: [rule], charged: [rule], charges: [charge], missing: [] }
    return storeFailure(engine, pending, error, now)
  }
  return singleVerdict(decision, now)
}

/** A request's rules split into those charged to the store and those decided without it. */
type Pending = {
  /** Every matching rule, in rule order. */
  readonly matched: readonly CompiledRule[]
  readonly charged: CompiledRule[]
  readonly charges: Charge[]
  /** Denials of rules that refuse requests lacking their identity. */
  readonly missing: RuleDecision[]
}

function decideAll(
  engine: Engine,
  matched: readonly CompiledRule[],
  identities: Identities,
  method: string | undefined,
  path: string,
  now: number,
): MaybePromise<Verdict> {
  const pending: Pending = { matched, charged: [], charges: [], missing: [] }
  let refused = false
  for (const rule of matched) {
    const cost = costFor(rule, method, path)
    const key = keyOf(rule, identities)
    if (key === undefined) {
      pending.missing.push(denial(rule, cost, undefined, undefined))
      if (!rule.shadow) refused = true
      continue
    }
    if (key === UNKNOWN_CLIENT_KEY) {
      engine.reporter.warnOnce(
        'WARN_SHARED_CLIENT_BUCKET',
        `rule "${rule.id}": a request without an ip identity was counted in one bucket shared by all such requests; check that the adapter resolves the client IP`,
      )
    }
    pending.charged.push(rule)
    pending.charges.push({
      rule: rule.id,
      algorithm: rule.algorithm,
      key,
      cost,
      shadow: rule.shadow,
    })
  }
  if (refused) return combine(pending.missing, now, 'missing-identity')
  return consumeAll(engine, pending, now)
}

/**
 * Decides again a request that a concurrency rule refused, from its verdict: the rules, keys and
 * costs it was decided under (what a request waiting for a slot is decided with once one frees).
 */
export function decideAgain(
  engine: Engine,
  verdict: Verdict,
  ruleOf: (id: string) => CompiledRule,
  now: number,
): MaybePromise<Verdict> {
  const pending: Pending = { matched: [], charged: [], charges: [], missing: [] }
  for (const d of verdict.decisions) {
    const rule = ruleOf(d.rule)
    ;(pending.matched as CompiledRule[]).push(rule)
    if (d.key === undefined) {
      pending.missing.push(d)
      continue
    }
    pending.charged.push(rule)
    pending.charges.push({
      rule: rule.id,
      algorithm: rule.algorithm,
      key: d.key,
      cost: d.cost,
      shadow: rule.shadow,
    })
  }
  return consumeAll(engine, pending, now)
}

/** Charges a request's rules to the store as one unit and reads the reply into a verdict. */
function consumeAll(engine: Engine, pending: Pending, now: number): MaybePromise<Verdict> {
  if (pending.charges.length === 0) return combine(pending.missing, now)
  let outcome: MaybePromise<Outcome>
  try {
    outcome = engine.store.consume(pending.charges, now)
    if (isPromiseLike(outcome)) {
      // Adopted (Promise.resolve in replyWithin), not outcome.then: a thenable's own `then` may
      // throw, call back twice or return anything. Inside the try, since reading `then` (or a
      // promise's `constructor`) can throw too.
      return replyWithin(outcome, engine.storeTimeoutMs, 'consume').then(
        (settled) => settle(engine, pending, settled, now),
        (error: unknown) => storeFailure(engine, pending, error, now),
      )
    }
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return settle(engine, pending, outcome, now)
}

/** Turns the store's reply into a verdict; a reply that is not one is a store failure. */
function settle(engine: Engine, pending: Pending, outcome: Outcome, now: number): Verdict {
  const { charged, charges } = pending
  const made: RuleDecision[] = new Array(charged.length)
  let at: number
  // Everything read from the reply is read here, once, into the limiter's own objects, which
  // are then checked: a getter or proxy in the reply that throws is caught like a bad figure.
  try {
    const decisions = outcome?.decisions
    if (!Array.isArray(decisions) || decisions.length !== charges.length) {
      throw new RateLimitError(
        'ERR_RL_STORE_REPLY',
        `the store answered ${Array.isArray(decisions) ? decisions.length : 'no'} decisions for ${charges.length} charges`,
      )
    }
    at = outcome.at
    // `at` places X-RateLimit-Reset and is handed back to the store by refund as `chargedAt`.
    if (!Number.isSafeInteger(at) || at < 0 || at > MAX_TIME_MS) {
      throw new RateLimitError(
        'ERR_RL_STORE_REPLY',
        `the store answered at ${shown(at)}, expected whole ms between 0 and ${MAX_TIME_MS}`,
      )
    }
    for (let i = 0; i < charged.length; i++) {
      const charge = charges[i]!
      made[i] = storeDecision(charged[i]!, decisions[i], charge.cost, charge.key)
    }
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return combine(inRuleOrder(pending, made), at)
}

/** A count the responder can send as it is: no NaN, no text, no fraction, not too large. */
function isCount(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_FIELD_INTEGER
}

/** A wait in ms: sent in whole seconds, so any safe whole number fits a field. */
function isDuration(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/**
 * A store's decision for one rule, copied into the limiter's own object and checked. Throws
 * `ERR_RL_STORE_REPLY` unless it has what the verdict and the responder read: they would
 * otherwise fail later, on the response path, as a 500 that no `onStoreError` decides. A few
 * comparisons per decision; nothing more is allocated unless the decision is bad. Exported for
 * `limiter.check`, whose store path needs the same.
 */
export function storeDecision(
  rule: CompiledRule,
  reply: unknown,
  cost: number,
  key: string,
): RuleDecision {
  if (typeof reply !== 'object' || reply === null) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered ${shown(reply)} for rule "${rule.id}", expected a decision`,
      { rule: rule.id },
    )
  }
  const decision = ruleDecision(rule, reply as Decision, cost, key, false)
  checkStoreDecision(decision)
  return decision
}

function checkStoreDecision(decision: RuleDecision): void {
  const field = unusableField(decision)
  if (field === undefined) return
  const expected =
    field === 'allowed'
      ? 'true or false'
      : `a whole number from 0 to ${field === 'remaining' || field === 'limit' ? MAX_FIELD_INTEGER : Number.MAX_SAFE_INTEGER}`
  throw new RateLimitError(
    'ERR_RL_STORE_REPLY',
    `the store's decision for rule "${decision.rule}" has ${field} ${shown(decision[field])}, expected ${expected}`,
    { rule: decision.rule, field },
  )
}

function unusableField(decision: RuleDecision): keyof Decision | undefined {
  if (typeof decision.allowed !== 'boolean') return 'allowed'
  if (!isCount(decision.remaining)) return 'remaining'
  if (!isCount(decision.limit)) return 'limit'
  if (!isDuration(decision.resetAfterMs)) return 'resetAfterMs'
  // Only a denial's wait is read (Retry-After, the RateLimit field's t); an admission has none.
  if (!decision.allowed && !isDuration(decision.retryAfterMs)) return 'retryAfterMs'
  // A queue rule's admission waits this long: a bad one would hold the request forever.
  if (decision.delayMs !== undefined && !isDuration(decision.delayMs)) return 'delayMs'
  return undefined
}

/** A bad value for an error message; never throws, whatever the store put there. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'object' && value !== null) return 'an object'
  return typeof value === 'function' ? 'a function' : String(value)
}

/**
 * The store failed: each charged enforcing rule's `onStoreError` decides. Any fail-closed one
 * denies the request; otherwise it passes, with no figures to report.
 */
function storeFailure(engine: Engine, pending: Pending, error: unknown, now: number): Verdict {
  const { charged, charges } = pending
  const denials: RuleDecision[] = []
  charged.forEach((rule, i) => {
    if (rule.shadow || !rule.failClosed) return
    denials.push(denial(rule, charges[i]!.cost, charges[i]!.key, engine.storeErrorRetryAfterMs))
  })
  engine.reporter.storeError(error, {
    operation: 'consume',
    rules: charged.map((rule) => rule.id),
    failClosed: denials.length > 0,
  })
  if (denials.length === 0) return combine(pending.missing, now, 'limit', true)
  return combine(inRuleOrder(pending, denials), now, 'store-unavailable', true)
}

/** Merges decisions with the missing-identity denials, in rule order. */
function inRuleOrder(pending: Pending, decisions: RuleDecision[]): RuleDecision[] {
  if (pending.missing.length === 0) return decisions
  const order = new Map(pending.matched.map((rule) => [rule.id, rule.index] as const))
  const indexOf = (d: RuleDecision) => order.get(d.rule)!
  return [...decisions, ...pending.missing].sort((a, b) => indexOf(a) - indexOf(b))
}
