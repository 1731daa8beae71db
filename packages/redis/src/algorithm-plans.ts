import { DEFAULT_CARRY } from '@tollgate/core'
import {
  type Algorithm,
  type CalendarWindows,
  type Charge,
  RateLimitError,
} from '@tollgate/core/store'
import type { RuleFields, RuleSetScripts, ScriptBook } from './rule-set-scripts.js'
import { MAX_RULE_SETS } from './rule-set-scripts.js'
import { CARRY_STRATEGY_CODES, VERSIONED_HEADER_BYTES } from './scripts/carry.lua.js'
import { concurrencyLua } from './scripts/concurrency.lua.js'
import { MAX_STATE_BYTES } from './scripts/identity-value.js'
import { leakyQueueLua } from './scripts/leaky-queue.lua.js'
import type { LuaAlgorithm } from './scripts/lua-algorithm.js'
import { luaAlgorithmNamed } from './scripts/registry.js'
import { slidingLogLua } from './scripts/sliding-log.lua.js'

/** What the store knows about an algorithm once, whatever the request. */
type AlgorithmPlan = {
  /** Tells this algorithm object from others in a rule set's cache key. */
  readonly id: number
  readonly lua: LuaAlgorithm
  /** [code, p1, …, p5] as the general scripts read them. */
  readonly args: readonly string[]
  /**
   * Its own one-rule scripts, or undefined past the bound or for a calendar window (the general
   * script serves it).
   */
  readonly oneRule: RuleSetScripts | undefined
  /** A calendar window's boundaries, which change from window to window: sent with each call. */
  readonly calendar: CalendarWindows | undefined
  /** A concurrency rule: each admission is a lease of its own, numbered per request. */
  readonly leased: boolean
  /** Its state lives in the identity value (the identity layout, a state of one short string). */
  readonly inIdentity: boolean
  /** In the identity layout: its one-rule scripts, by the rule's field. */
  readonly oneRuleByField: Map<number, RuleSetScripts | undefined>
  /**
   * The carry argument of its charges (carry.lua.ts): '-1', or for a rule that declares a
   * `version` whose states carry here, version × 4 + its `onChange`. Such a rule takes the
   * general scripts, which read and write the figures beside each state.
   */
  readonly carry: string
}

/** A charge's algorithm plan, made on first use (a charge of an algorithm no script runs throws). */
export type PlanOf = (charge: Charge) => AlgorithmPlan

/** What concurrency charges are leased with: the lease time, and this store's process id. */
export type LeaseTerms = { readonly leaseMs: number; readonly owner: number }

/** The version and `onChange` a rule's states are kept under (`Algorithm.versioned`). */
export type Versioned = NonNullable<Algorithm['versioned']>

/**
 * The plans of the algorithms charged so far, by algorithm object. `figured` holds the rules
 * with per-client figures (`carryFigures`) and the version their keys are kept under: a charge of
 * theirs whose algorithm carries no version (a client's figures, or a rule that declares none) is
 * kept under it, so that every key of the rule keeps its figures beside its state and carries
 * when a request comes with others.
 */
export function algorithmPlans(
  identityLayout: boolean,
  leases: LeaseTerms,
  book: ScriptBook,
  figured: ReadonlyMap<string, Versioned>,
): PlanOf {
  const plans = new WeakMap<Algorithm, AlgorithmPlan>()
  let made = 0
  return (charge) => {
    let plan = plans.get(charge.algorithm)
    if (plan === undefined) {
      const versioned = charge.algorithm.versioned ?? figured.get(charge.rule)
      plan = planFor(charge, versioned, made, identityLayout, leases, book)
      made++
      plans.set(charge.algorithm, plan)
    }
    return plan
  }
}

/** The one-rule scripts of a charge's rule: its algorithm's, or its field's in the identity value. */
export function oneRuleScripts(
  planOf: PlanOf,
  fields: RuleFields,
  book: ScriptBook,
): (charge: Charge) => RuleSetScripts | undefined {
  return (charge) => {
    const plan = planOf(charge)
    return plan.inIdentity ? oneRuleInIdentity(plan, charge.rule, fields, book) : plan.oneRule
  }
}

/** The parameters of [code, p1, …, p5]. */
export function paramsOf(args: readonly string[]): readonly string[] {
  return args.slice(1)
}

function planFor(
  charge: Charge,
  versioned: Versioned | undefined,
  id: number,
  identityLayout: boolean,
  leases: LeaseTerms,
  book: ScriptBook,
): AlgorithmPlan {
  const lua = luaOf(charge)
  const args = scriptArgs(lua, charge.algorithm, leases)
  const params = charge.algorithm.params
  const calendar = params?.kind === 'window' ? params.calendar : undefined
  // A lease number changes with every request, so it cannot be a rule-set script's constant.
  const leased = params?.kind === 'concurrency'
  const inIdentity = identityLayout && fitsIdentityValue(lua, charge.algorithm)
  const carry = carryArg(charge.algorithm, versioned, lua, calendar, identityLayout)
  const oneRule =
    calendar === undefined && !leased && !inIdentity && carry === '-1'
      ? book.of([{ algorithm: lua, params: paramsOf(args), shadow: false }])
      : undefined
  const oneRuleByField = new Map()
  return { id, lua, args, oneRule, calendar, leased, inIdentity, oneRuleByField, carry }
}

/**
 * A charge's carry argument: -1 but for a rule that declares a `version` and whose state is one
 * string the scripts carry (`carriesOnRedis`): the version × 4 + its `onChange`.
 */
function carryArg(
  algorithm: Algorithm,
  versioned: Versioned | undefined,
  lua: LuaAlgorithm,
  calendar: CalendarWindows | undefined,
  identityLayout: boolean,
): string {
  if (versioned === undefined || !carriesOnRedis(lua, algorithm, calendar, identityLayout)) {
    return '-1'
  }
  const strategy = versioned.onChange ?? DEFAULT_CARRY[algorithm.name]
  return String(versioned.version * 4 + CARRY_STRATEGY_CODES[strategy])
}

/**
 * Whether the scripts carry this algorithm's states across a change of figures: the rate rules
 * (not the leaky queue, whose figures never change while running) and the windows but the
 * sliding log (its long form is a list) and calendar windows (whose figures move with the window).
 */
export function carriesOnRedis(
  lua: LuaAlgorithm,
  algorithm: Algorithm,
  calendar: CalendarWindows | undefined,
  identityLayout: boolean,
): boolean {
  if (calendar !== undefined) return false
  if (
    identityLayout &&
    fitsIdentityValue(lua, algorithm) &&
    !fitsIdentityValue(lua, algorithm, VERSIONED_HEADER_BYTES)
  ) {
    // Its state fits the identity value only without the version and figures: kept there as it
    // is (where a process of any version finds it), so it does not carry.
    return false
  }
  return (
    lua.code !== slidingLogLua.code &&
    lua.code !== leakyQueueLua.code &&
    lua.code !== concurrencyLua.code
  )
}

/** The one-rule scripts of a rule in the identity layout, which hold its field. */
function oneRuleInIdentity(
  plan: AlgorithmPlan,
  rule: string,
  fields: RuleFields,
  book: ScriptBook,
): RuleSetScripts | undefined {
  const field = fields.of(rule)
  if (plan.oneRuleByField.has(field)) return plan.oneRuleByField.get(field)
  if (plan.calendar !== undefined || plan.carry !== '-1') return undefined
  const found = book.of([
    { algorithm: plan.lua, params: paramsOf(plan.args), shadow: false, field },
  ])
  // Rule ids come from configuration; a store making rules per request stops remembering.
  if (plan.oneRuleByField.size < MAX_RULE_SETS) plan.oneRuleByField.set(field, found)
  return found
}

function luaOf(charge: Charge): LuaAlgorithm {
  const lua = luaAlgorithmNamed(charge.algorithm.name)
  const params = charge.algorithm.params
  if (lua === undefined || params === undefined || params.kind !== lua.kind) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `the Redis store runs only the built-in algorithms (token_bucket, gcra, leaky_bucket, leaky_queue, fixed_window, sliding_log, sliding_window, concurrency) with their parameters; got ${JSON.stringify(charge.algorithm.name)}`,
      { rule: charge.rule, field: 'algorithm' },
    )
  }
  if (params.kind === 'window' && params.anchor !== undefined) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `the Redis store runs fixed windows aligned to the epoch; got anchor ${JSON.stringify(params.anchor)}`,
      { rule: charge.rule, field: 'anchor' },
    )
  }
  return lua
}

/**
 * [code, p1, …, p5] for an algorithm the scripts know, from its scaled integer parameters; a
 * concurrency rule's p5, its lease number, is set per request.
 */
function scriptArgs(
  lua: LuaAlgorithm,
  algorithm: Algorithm,
  leases: LeaseTerms,
): readonly string[] {
  const params = algorithm.params!
  const code = String(lua.code)
  if (params.kind === 'rate') {
    const { unitsPerMs, unitsPerToken, capacity, delayTicks = 0 } = params
    // A wait bound past the longest line never binds (-1: none); it stays an exact integer.
    const maxWait = params.maxWaitTicks ?? Number.POSITIVE_INFINITY
    const maxWaitTicks = maxWait > capacity ? -1 : maxWait
    const rate = [code, String(unitsPerMs), String(unitsPerToken), String(capacity)]
    return [...rate, String(delayTicks), String(maxWaitTicks)]
  }
  if (params.kind === 'window') {
    const { limit, windowMs, buckets = 0 } = params
    return [code, String(limit), String(windowMs), String(buckets), '0', '0']
  }
  const { limit, retryAfterMs } = params
  return [
    code,
    String(limit),
    String(retryAfterMs),
    String(leases.leaseMs),
    String(leases.owner),
    '0',
  ]
}

/**
 * Whether a rule's state is kept in the identity value: one string of at most MAX_STATE_BYTES.
 * A concurrency rule keeps a sorted set of leases, and a sliding log may grow into a list:
 * both stay on a key of their own (under the same hash tag, so in the same slot); so does a
 * sliding window of more than 30 sub-windows (9 + 8 bytes each). `extra`: bytes before the
 * state (a versioned state's header, carry.lua.ts).
 */
function fitsIdentityValue(lua: LuaAlgorithm, algorithm: Algorithm, extra = 0): boolean {
  if (lua.kind === 'concurrency' || lua.code === slidingLogLua.code) return false
  const params = algorithm.params
  const buckets = params?.kind === 'window' ? (params.buckets ?? 0) : 0
  return 9 + 8 * buckets + extra <= MAX_STATE_BYTES
}
