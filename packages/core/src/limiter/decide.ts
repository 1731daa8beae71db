import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import type { Charge, Outcome } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { costOf } from './costs.js'
import { type Engine, isPromiseLike } from './engine.js'
import { keyOf, UNKNOWN_CLIENT_KEY } from './keys.js'
import { matchesAny, normalizePath } from './path-pattern.js'
import type { RuleIndex } from './rule-index.js'
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
  const path = normalizePath(facts.path)
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
    if (routePatterns !== null && !matchesAny(routePatterns!, path)) continue
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
  return rule.costs === undefined ? rule.cost : costOf(rule.costs, method, path, rule.cost)
}

/** One rule, a synchronous store: no arrays, no promise. */
function decideOne(engine: Engine, rule: CompiledRule, key: string, cost: number, now: number) {
  let decision: Decision
  try {
    decision = engine.consumeOne!(rule.id, rule.algorithm, key, cost, now)
  } catch (error) {
    const charge = { rule: rule.id, algorithm: rule.algorithm, key, cost, shadow: rule.shadow }
    const pending = { matched: [rule], charged: [rule], charges: [charge], missing: [] }
    return storeFailure(engine, pending, error, now)
  }
  return singleVerdict(ruleDecision(rule, decision, cost, key, false), now)
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
  if (pending.charges.length === 0) return combine(pending.missing, now)
  let outcome: MaybePromise<Outcome>
  try {
    outcome = engine.store.consume(pending.charges, now)
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  if (isPromiseLike(outcome)) {
    return outcome.then(
      (settled) => settle(engine, pending, settled, now),
      (error: unknown) => storeFailure(engine, pending, error, now),
    )
  }
  return settle(engine, pending, outcome, now)
}

function settle(engine: Engine, pending: Pending, outcome: Outcome, now: number): Verdict {
  const { charged, charges } = pending
  const decisions = outcome?.decisions
  if (!Array.isArray(decisions) || decisions.length !== charges.length) {
    const error = new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered ${Array.isArray(decisions) ? decisions.length : 'no'} decisions for ${charges.length} charges`,
    )
    return storeFailure(engine, pending, error, now)
  }
  const made: RuleDecision[] = new Array(charged.length)
  for (let i = 0; i < charged.length; i++) {
    const charge = charges[i]!
    made[i] = ruleDecision(charged[i]!, decisions[i] as Decision, charge.cost, charge.key, false)
  }
  return combine(inRuleOrder(pending, made), outcome.at)
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
