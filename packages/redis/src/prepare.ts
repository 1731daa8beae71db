import { createHash } from 'node:crypto'
import {
  type Algorithm,
  type CalendarWindows,
  type Charge,
  checkCost,
  RateLimitError,
} from '@tollgate/core/store'
import { encodeKey, encodeRule } from './keys.js'
import { CALENDAR_LENGTH_BASE } from './scripts/fixed-window.lua.js'
import { MAX_STATE_BYTES } from './scripts/identity-value.js'
import { type Script, script } from './scripts/index.js'
import type { LuaAlgorithm } from './scripts/lua-algorithm.js'
import { luaAlgorithmNamed } from './scripts/registry.js'
import { type RuleSetShape, requestKeyPlaces, ruleSetLua } from './scripts/rule-set.lua.js'
import { slidingLogLua } from './scripts/sliding-log.lua.js'

/**
 * Where states live: `'rule'`, a key per rule and identity (`<prefix>:<rule>:{<identity>}`);
 * `'identity'`, one value per identity (`<prefix>:{<identity>}`) holding the states of every
 * rule keyed on it (scripts/identity-value.ts), but for the rules whose state is not one short
 * string, which keep a key of their own.
 */
export type Layout = 'rule' | 'identity'

/** A charge ready for a general script call: its Redis key, hash tag and ARGV entries. */
export type PreparedCharge = {
  readonly key: string
  /** The hash tag contents (the encoded identity), for Redis Cluster slot grouping. */
  readonly tag: string
  /** [algorithm code, cost, shadow, p1, …, p5, field] as the scripts read them. */
  readonly args: readonly string[]
  /**
   * Where its state lives: the key, or the key and the field in the identity value. Two charges
   * of one request on the same place charge one state.
   */
  readonly place: string
  /** A concurrency charge's lease number (its units' members in the set: see concurrency.lua.ts). */
  readonly lease?: number
}

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
}

/**
 * The two scripts of one rule set (rule-set.lua.ts): `one` decides a single request with no
 * loop around it, `many` a batch of requests, in order. Both reply alike.
 */
export type RuleSetScripts = {
  readonly one: Script
  readonly many: Script
  /**
   * The keys a request's call reads: one per rule, but one for all the rules whose states share
   * the identity value. What a batch is sized by (coalesce.ts).
   */
  readonly keysRead: number
  /**
   * Which of a request's keys (one per charge, in order) it sends, by charge index: the
   * identity's once, at its first rule's place (requestKeyPlaces); undefined when all of them.
   */
  readonly sent: readonly number[] | undefined
}

/**
 * Rule sets a store makes scripts for, at most. Each distinct set of rules (algorithms,
 * parameters, shadow flags, in order) gets its own two, and Redis keeps every loaded script
 * until `SCRIPT FLUSH`; rules come from configuration, so this bound is only reached by an app
 * that builds algorithms per request, whose requests then take the general script.
 */
export const MAX_RULE_SETS = 256

/**
 * The most rules a rule-set script decides per request (its source grows with each, and Lua
 * allows a function 200 locals). A request charging more takes the general script.
 */
export const MAX_RULES_PER_SCRIPT = 8

export type ChargePreparer = {
  /**
   * Validates a charge and builds its key and arguments for the general scripts; a calendar
   * window's are those of the window holding `now` (the caller's clock). A concurrency charge
   * gets the next lease number, or `lease` (the one to give back).
   */
  prepare(charge: Charge, now: number, lease?: number): PreparedCharge
  /**
   * The time a refund script compares with the state: a calendar window's charge is sent as the
   * start of its window, which the script cannot compute.
   */
  refundTime(charge: Charge, chargedAt: number): number
  /** Validates a charge and returns its Redis key. */
  keyOf(charge: Charge): string
  /** `keyOf` of each charge, a key repeated from the charge before it built once. */
  keysOf(charges: readonly Charge[]): string[]
  /** The store's layout. */
  readonly layout: Layout
  /** The one-rule scripts of the charge's algorithm, if it has them (call after `keyOf`). */
  oneRuleScript(charge: Charge): RuleSetScripts | undefined
  /**
   * The rule-set scripts of several charges (their algorithms and shadow flags, in order), if
   * they have them (call after `keyOf` on each).
   */
  ruleSetScript(charges: readonly Charge[]): RuleSetScripts | undefined
  /** Every rule-set script made so far, one-rule scripts included, both shapes. */
  ruleSetScripts(): readonly Script[]
}

/** A set of rules a store has found the scripts of: what a request's charges are compared with. */
type KnownSet = {
  readonly algorithms: readonly Algorithm[]
  readonly rules: readonly string[]
  readonly shadows: readonly boolean[]
  readonly scripts: RuleSetScripts
}

/** Sets remembered per first algorithm (an app has a few per rule); others take the id's way. */
const KNOWN_SETS_PER_ALGORITHM = 16

/** The charges are of the known set's rules, algorithms and shadow flags, in order. */
function sameSet(set: KnownSet, charges: readonly Charge[]): boolean {
  const { algorithms, rules, shadows } = set
  if (algorithms.length !== charges.length) return false
  for (let i = 0; i < charges.length; i++) {
    const charge = charges[i]!
    if (
      charge.algorithm !== algorithms[i] ||
      charge.rule !== rules[i] ||
      charge.shadow !== shadows[i]
    ) {
      return false
    }
  }
  return true
}

/** What concurrency charges are leased with: the lease time, and this store's process id. */
type LeaseTerms = { readonly leaseMs: number; readonly owner: number }

/** Validates charges and builds their keys and arguments, caching what depends only on rules. */
export function chargePreparer(
  prefix: string,
  clock: { readonly serverTime: boolean; readonly marginMs: number },
  leases: LeaseTerms,
  layout: Layout = 'rule',
): ChargePreparer {
  let leasesMade = 0
  const ruleKeyPrefixes = new Map<string, string>()
  const identityKeyPrefix = `${prefix}:{`
  const fields = ruleFields()
  const plans = new WeakMap<Algorithm, AlgorithmPlan>()
  let plansMade = 0
  // By source, so that equal rules share one script (and one batch of requests).
  const scriptsBySource = new Map<string, RuleSetScripts>()
  // By the ids and shadow flags of a request's algorithms: what a request looks up. `null`: past
  // the bound on scripts, so the general script serves that set (remembered, not rebuilt).
  const ruleSets = new Map<string, RuleSetScripts | null>()

  function ruleKeyPrefix(rule: string): string {
    let cached = ruleKeyPrefixes.get(rule)
    if (cached === undefined) {
      cached = `${prefix}:${encodeRule(rule)}:{`
      // Rule ids come from configuration, so this map stays small; the bound is a safety net.
      if (ruleKeyPrefixes.size < 10_000) ruleKeyPrefixes.set(rule, cached)
    }
    return cached
  }

  function scriptOf(rules: RuleSetShape['rules']): RuleSetScripts | undefined {
    const source = ruleSetLua({ rules, ...clock, requests: 'many' })
    let found = scriptsBySource.get(source)
    if (found === undefined && scriptsBySource.size < MAX_RULE_SETS) {
      const { sent } = requestKeyPlaces(rules)
      found = {
        one: script(ruleSetLua({ rules, ...clock, requests: 'one' })),
        many: script(source),
        keysRead: sent.length,
        sent: sent.length === rules.length ? undefined : sent,
      }
      scriptsBySource.set(source, found)
    }
    return found
  }

  function planOf(charge: Charge): AlgorithmPlan {
    let plan = plans.get(charge.algorithm)
    if (plan === undefined) {
      const lua = luaOf(charge)
      const args = scriptArgs(lua, charge.algorithm, leases)
      const params = charge.algorithm.params
      const calendar = params?.kind === 'window' ? params.calendar : undefined
      // A lease number changes with every request, so it cannot be a rule-set script's constant.
      const leased = params?.kind === 'concurrency'
      const inIdentity = layout === 'identity' && fitsIdentityValue(lua, charge.algorithm)
      const oneRule =
        calendar === undefined && !leased && !inIdentity
          ? scriptOf([{ algorithm: lua, params: paramsOf(args), shadow: false }])
          : undefined
      plan = {
        id: plansMade++,
        lua,
        args,
        oneRule,
        calendar,
        leased,
        inIdentity,
        oneRuleByField: new Map(),
      }
      plans.set(charge.algorithm, plan)
    }
    return plan
  }

  // The sets of rules found before, by their first algorithm: a request compares its charges'
  // algorithms, shadow flags and rules with these (a few reference comparisons) before it
  // builds the set's id (a string per request) to look it up.
  const knownSets = new WeakMap<Algorithm, KnownSet[]>()

  function ruleSetScript(charges: readonly Charge[]): RuleSetScripts | undefined {
    if (charges.length > MAX_RULES_PER_SCRIPT) return undefined
    const known = knownSets.get(charges[0]!.algorithm)
    if (known !== undefined) {
      for (let i = 0; i < known.length; i++) {
        if (sameSet(known[i]!, charges)) return known[i]!.scripts
      }
    }
    const found = ruleSetScriptById(charges)
    if (found !== undefined && (known?.length ?? 0) < KNOWN_SETS_PER_ALGORITHM) {
      const set: KnownSet = {
        algorithms: charges.map((charge) => charge.algorithm),
        rules: charges.map((charge) => charge.rule),
        shadows: charges.map((charge) => charge.shadow),
        scripts: found,
      }
      if (known === undefined) knownSets.set(charges[0]!.algorithm, [set])
      else known.push(set)
    }
    return found
  }

  function ruleSetScriptById(charges: readonly Charge[]): RuleSetScripts | undefined {
    let id = ''
    for (const charge of charges) {
      const plan = planOf(charge)
      if (plan.calendar !== undefined || plan.leased) return undefined
      const field = plan.inIdentity ? `:${fields.of(charge.rule)}` : ''
      id += `${plan.id}${charge.shadow ? 's' : ''}${field},`
    }
    const known = ruleSets.get(id)
    if (known !== undefined) return known ?? undefined
    // Sets of algorithm objects made per request would never repeat: stop remembering them.
    if (ruleSets.size >= MAX_RULE_SETS * 4) return undefined
    const found = scriptOf(
      charges.map((charge) => {
        const { lua, args, inIdentity } = planOf(charge)
        const field = inIdentity ? fields.of(charge.rule) : undefined
        return { algorithm: lua, params: paramsOf(args), shadow: charge.shadow, field }
      }),
    )
    ruleSets.set(id, found ?? null)
    return found
  }

  /**
   * The Redis keys of a request's charges, each validated: a charge on the same identity value
   * (the same key, the same prefix) as the one before it gets the same string, built once.
   */
  function keysOf(charges: readonly Charge[]): string[] {
    const keys: string[] = new Array(charges.length)
    let start = ''
    for (let i = 0; i < charges.length; i++) {
      const charge = charges[i]!
      const next = startOf(charge)
      keys[i] =
        i > 0 && next === start && charge.key === charges[i - 1]!.key
          ? keys[i - 1]!
          : `${next}${encodeKey(charge.key)}}`
      start = next
    }
    return keys
  }

  /** Validates a charge and returns its key up to the identity: `<prefix>:<rule>:{` or `<prefix>:{`. */
  function startOf(charge: Charge): string {
    checkCost(charge.cost)
    const plan = planOf(charge)
    if (charge.cost > charge.algorithm.limit) {
      throw new RateLimitError(
        'ERR_RL_COST_EXCEEDS_CAPACITY',
        `a cost of ${charge.cost} can never pass rule ${charge.rule}, whose capacity is ${charge.algorithm.limit}`,
        { rule: charge.rule, field: 'cost' },
      )
    }
    return plan.inIdentity ? identityKeyPrefix : ruleKeyPrefix(charge.rule)
  }

  function keyOf(charge: Charge): string {
    return `${startOf(charge)}${encodeKey(charge.key)}}`
  }

  /** The one-rule scripts of a rule in the identity layout, which hold its field. */
  function oneRuleInIdentity(plan: AlgorithmPlan, rule: string): RuleSetScripts | undefined {
    const field = fields.of(rule)
    if (plan.oneRuleByField.has(field)) return plan.oneRuleByField.get(field)
    if (plan.calendar !== undefined) return undefined
    const rules = [{ algorithm: plan.lua, params: paramsOf(plan.args), shadow: false, field }]
    const found = scriptOf(rules)
    // Rule ids come from configuration; a store making rules per request stops remembering.
    if (plan.oneRuleByField.size < MAX_RULE_SETS) plan.oneRuleByField.set(field, found)
    return found
  }

  return {
    keyOf,
    keysOf,
    layout,
    oneRuleScript(charge) {
      const plan = planOf(charge)
      return plan.inIdentity ? oneRuleInIdentity(plan, charge.rule) : plan.oneRule
    },
    ruleSetScript,
    ruleSetScripts: () => [...scriptsBySource.values()].flatMap(({ one, many }) => [one, many]),
    refundTime(charge, chargedAt) {
      const calendar = planOf(charge).calendar
      return calendar === undefined ? chargedAt : calendar.windowAt(chargedAt)[0]
    },
    prepare(charge, now, given) {
      const key = keyOf(charge)
      const plan = planOf(charge)
      const [code, p1, p2, p3, p4, p5] =
        plan.calendar === undefined ? plan.args : calendarArgs(plan.args, plan.calendar, now)
      // The hash tag: what lies between the key's `{` and the closing `}`.
      const tag = key.slice(key.indexOf('{') + 1, -1)
      const head = [code!, String(charge.cost), charge.shadow ? '1' : '0', p1!, p2!, p3!, p4!]
      if (plan.inIdentity) {
        const field = String(fields.of(charge.rule))
        return { key, tag, args: [...head, p5!, field], place: `${key} ${field}` }
      }
      if (!plan.leased) return { key, tag, args: [...head, p5!, '0'], place: key }
      // Whole numbers below 2^53, as every argument the scripts read.
      if (given === undefined) leasesMade = (leasesMade + 1) % Number.MAX_SAFE_INTEGER
      const lease = given ?? leasesMade
      return { key, tag, args: [...head, String(lease), '0'], place: key, lease }
    },
  }
}

/**
 * [code, limit, b1, lengths, 0, 0] of a calendar window: the window holding `now` starts at b1, and its
 * length and the next window's, in whole seconds (boundaries are: zone offsets are), packed into
 * one integer (fixed-window.lua.ts reads them).
 */
function calendarArgs(
  args: readonly string[],
  calendar: CalendarWindows,
  now: number,
): readonly string[] {
  const [start, end] = calendar.windowAt(now)
  const next = calendar.windowAt(end)[1]
  const lengths = ((end - start) / 1000) * CALENDAR_LENGTH_BASE + (next - end) / 1000
  return [args[0]!, args[1]!, String(start), String(lengths), '0', '0']
}

/** The parameters of [code, p1, …, p5]. */
function paramsOf(args: readonly string[]): readonly string[] {
  return args.slice(1)
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
 * sliding window of more than 30 sub-windows (9 + 8 bytes each).
 */
function fitsIdentityValue(lua: LuaAlgorithm, algorithm: Algorithm): boolean {
  if (lua.kind === 'concurrency' || lua.code === slidingLogLua.code) return false
  const params = algorithm.params
  const buckets = params?.kind === 'window' ? (params.buckets ?? 0) : 0
  return 9 + 8 * buckets <= MAX_STATE_BYTES
}

/**
 * Each rule's field in the identity value: the first 4 bytes of the SHA-1 of its id, so every
 * process finds a rule's state at the same field whatever its other rules. Two rule ids of
 * this store with the same field are refused (1 chance in 4 billion for a pair).
 */
function ruleFields(): { of(rule: string): number } {
  const byRule = new Map<string, number>()
  const byField = new Map<number, string>()
  return {
    of(rule) {
      let field = byRule.get(rule)
      if (field === undefined) {
        // 0 means a key of its own to the scripts.
        field = createHash('sha1').update(rule).digest().readUInt32LE(0) || 1
        const other = byField.get(field)
        if (other !== undefined && other !== rule) {
          throw new RateLimitError(
            'ERR_RL_INVALID_RULE',
            `rules ${other} and ${rule} would share a field of the Redis identity layout: rename one`,
            { rule, field: 'id' },
          )
        }
        // Rule ids come from configuration, so these stay small; the bound is a safety net.
        if (byRule.size < 10_000) {
          byRule.set(rule, field)
          byField.set(field, rule)
        }
      }
      return field
    },
  }
}
