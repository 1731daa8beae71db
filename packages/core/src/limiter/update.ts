import { type CarryStrategy, DEFAULT_CARRY } from '../algorithms/carried-use.js'
import { carryState } from '../algorithms/carry.js'
import { RateLimitError } from '../errors.js'
import { checkRules } from '../rules/define-rules.js'
import type { Rule } from '../rules/types.js'
import { sameRule } from '../store/rule-tables.js'
import type { RuleChange, Store } from '../store/types.js'
import { type CompiledRule, compiledRules } from './compile-rule.js'
import type { LimiterParts, LimiterSetup, TimeOf } from './create-limiter.js'
import { isPromiseLike } from './engine.js'
import { checkIdentityNames } from './identity-names.js'
import { messageOf } from './report.js'
import type { RuleIndex } from './rule-index.js'
import { checkRuleParts } from './rule-set.js'
import type { Limiter, LimiterOptions, RulesUpdate, UpdateOptions } from './types.js'

/** A rule set checked and compiled as at start-up, ready to be swapped in. */
type CompiledRuleSet = {
  readonly rules: readonly Rule[]
  readonly compiled: readonly CompiledRule[]
  readonly byId: ReadonlyMap<string, CompiledRule>
  readonly index: RuleIndex
}

/**
 * `limiter.update(rules)`: the rules changed while running. A set that fails validation is
 * refused whole (the error thrown, logged as `WARN_RULES_UPDATE_REFUSED`, counted in
 * `limiter.updatesRefused`) and the running rules stay. A valid set is swapped in at once, in
 * one synchronous step (after the store has been told, for a store that answers later), so a
 * request is decided entirely under the old rules or entirely under the new ones. Each rule that
 * keeps its id but changes its figures carries its keys' states by its `onChange`, lazily, in
 * the store; added rules start fresh and removed rules' states are dropped.
 */
export function rulesUpdater(
  limiter: Limiter,
  limiterOptions: LimiterOptions,
  parts: LimiterParts,
  given: LimiterSetup,
  timeOf: TimeOf,
): void {
  // Written here only: the limiter's setup (its rules by id, which every part of the limiter
  // looks them up in, changed in place), as its `decide` and `ruleOf` read it.
  const setup = given as LimiterSetup & {
    index: RuleIndex
    retired: ReadonlyMap<string, CompiledRule>
  }
  const byId = setup.byId as Map<string, CompiledRule>
  // Rules an update removed: verdicts made under them are still refunded and released.
  const retired = new Map<string, CompiledRule>()
  setup.retired = retired
  const store = limiter.store
  let refused = 0
  function refuse(error: unknown): never {
    refused++
    setup.engine.reporter.warnOnce(
      'WARN_RULES_UPDATE_REFUSED',
      `limiter.update() refused the new rules; the running rules stay: ${messageOf(error)}`,
    )
    throw error
  }
  /** One synchronous step: a request decides under the rule set it started with. */
  function swap(next: CompiledRuleSet): void {
    for (const [id, rule] of byId) if (!next.byId.has(id)) retired.set(id, rule)
    byId.clear()
    for (const [id, rule] of next.byId) byId.set(id, rule)
    for (const id of byId.keys()) retired.delete(id)
    Object.assign(limiter, { rules: next.rules })
    setup.index = next.index
  }
  function update(rules: unknown, options?: UpdateOptions): RulesUpdate | Promise<RulesUpdate> {
    let next: CompiledRuleSet
    let plan: UpdatePlan
    try {
      next = compileRuleSet(rules, limiterOptions, parts, store)
      if (options !== undefined) for (const rule of next.rules) checkServed(rule, options)
      plan = planUpdate(byId, next)
      checkCarryingStore(store, plan)
    } catch (error) {
      refuse(error)
    }
    const told =
      plan.changes.length + plan.removed.length === 0
        ? undefined
        : store.updateRules?.(plan.changes, plan.removed, timeOf(undefined)[0])
    const done = () => {
      swap(next)
      return plan.summary
    }
    // A store that answers later is told first: no request reaches it under the new rules
    // before it carries their states.
    return isPromiseLike(told) ? Promise.resolve(told).then(done, refuse) : done()
  }
  Object.defineProperties(limiter, {
    update: { value: update, enumerable: true },
    updatesRefused: { get: () => refused, enumerable: true },
  })
}

type UpdatePlan = {
  readonly changes: RuleChange[]
  readonly removed: string[]
  readonly summary: RulesUpdate
}

/** Which rules are added, removed, changed (with how their states carry) and unchanged. */
function planUpdate(before: ReadonlyMap<string, CompiledRule>, next: CompiledRuleSet): UpdatePlan {
  const changes: RuleChange[] = []
  const summary = {
    added: [] as string[],
    removed: [] as string[],
    changed: [] as string[],
    unchanged: [] as string[],
  }
  // A rule whose states start fresh is dropped like a removed one: nothing to carry.
  const dropped: string[] = []
  for (const rule of next.compiled) {
    const old = before.get(rule.id)
    if (old === undefined) summary.added.push(rule.id)
    else if (sameRule(old.algorithm, rule.algorithm)) summary.unchanged.push(rule.id)
    else {
      summary.changed.push(rule.id)
      checkChangeable(old)
      checkChangeable(rule)
      const strategy: CarryStrategy = rule.rule.onChange ?? DEFAULT_CARRY[rule.algorithm.name]
      const [from, to] = [old.algorithm, rule.algorithm]
      if (strategy === 'reset') dropped.push(rule.id)
      else {
        changes.push({
          rule: rule.id,
          from,
          to,
          carry: (slots, offset, now) => carryState(from, slots, offset, to, now, strategy),
        })
      }
    }
  }
  for (const id of before.keys()) if (!next.byId.has(id)) summary.removed.push(id)
  return { changes, removed: [...summary.removed, ...dropped], summary }
}

/**
 * Rules whose requests wait (a leaky queue's admissions, a concurrency rule's line) or whose
 * charges are settled later hold requests across the change; their figures are not changed
 * while running (the rule may be kept as it is, added or removed).
 */
function checkChangeable(rule: CompiledRule): void {
  const { algorithm } = rule
  const field =
    rule.settleWithinMs !== undefined
      ? 'settle'
      : algorithm.slotQueue !== undefined
        ? 'queue'
        : algorithm.scheduler !== undefined
          ? 'algorithm'
          : undefined
  if (field === undefined) return
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    `rule "${rule.id}": its figures cannot change while running (${field}: requests wait on it); keep it as it is, or remove it and add it under another id`,
    { rule: rule.id, field },
  )
}

/** A store that cannot carry states across a change refuses one, rather than reset them unsaid. */
function checkCarryingStore(store: Store, plan: UpdatePlan): void {
  if (plan.summary.changed.length === 0 || typeof store.updateRules === 'function') return
  throw new RateLimitError(
    'ERR_RL_INVALID_OPTION',
    `store: cannot carry the state of rules whose figures change (${plan.summary.changed.map((id) => `"${id}"`).join(', ')}) across limiter.update(); change them under a new id, or restart`,
    { field: 'store' },
  )
}

/** A rule set given to `limiter.update`, checked exactly as at start-up and compiled. */
function compileRuleSet(
  given: unknown,
  options: LimiterOptions,
  parts: LimiterParts,
  store: Store,
): CompiledRuleSet {
  const algorithms = options.algorithms ?? parts.algorithms
  const routes = parts.routes
  const rules = checkRules(given as LimiterOptions['rules'], algorithms, parts)
  checkIdentityNames(rules, options.customIdentities, parts.apiKeysLeftOut)
  const compiled = compiledRules(rules, algorithms, parts)
  checkRuleParts(store, compiled, parts)
  return {
    rules,
    compiled,
    byId: new Map(compiled.map((rule) => [rule.id, rule] as const)),
    index: routes.ruleIndex(compiled),
  }
}

/** A middleware serves the rules it was made for: refused, naming the rule and field, if not. */
function checkServed(rule: Rule, served: UpdateOptions): void {
  const missing = rule.match.identity.find((name) => served.reads?.(name) === false)
  if (missing !== undefined) {
    throw unserved(
      rule,
      'match.identity',
      `keys on "${missing}", which this middleware was not made to read; make a new middleware for it`,
    )
  }
  if (served.follows?.(rule) === false) {
    throw unserved(
      rule,
      'algorithm',
      'a concurrency or queue rule this observed limiter was not made with: make a new observedLimiter for it',
    )
  }
  if (rule.algorithm === 'concurrency' && served.releasesSlots === false) {
    throw unserved(
      rule,
      'algorithm',
      'a concurrency rule, in a middleware made without one, whose slots it would never give back; make a new middleware for it',
    )
  }
}

function unserved(rule: Rule, field: string, problem: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `rule "${rule.id}": ${field}: ${problem}`, {
    rule: rule.id,
    field,
  })
}
