import { type Algorithm, type Charge, checkCost, RateLimitError } from '@tollgate/core'
import { encodeKey, encodeRule } from './keys.js'
import { type Script, script } from './scripts/index.js'
import type { LuaAlgorithm } from './scripts/lua-algorithm.js'
import { luaAlgorithmNamed } from './scripts/registry.js'
import { type RuleSetShape, ruleSetLua } from './scripts/rule-set.lua.js'

/** A charge ready for a general script call: its Redis key, hash tag and ARGV entries. */
export type PreparedCharge = {
  readonly key: string
  /** The hash tag contents (the encoded identity), for Redis Cluster slot grouping. */
  readonly tag: string
  /** [algorithm code, cost, shadow, p1, p2, p3] as the scripts read them. */
  readonly args: readonly string[]
}

/** What the store knows about an algorithm once, whatever the request. */
type AlgorithmPlan = {
  /** Tells this algorithm object from others in a rule set's cache key. */
  readonly id: number
  readonly lua: LuaAlgorithm
  /** [code, p1, p2, p3] as the general scripts read them. */
  readonly args: readonly string[]
  /** Its own one-rule script, or undefined past the bound (the general script serves it). */
  readonly oneRule: Script | undefined
}

/**
 * Rule-set scripts a store makes at most. Each distinct set of rules (algorithms, parameters,
 * shadow flags, in order) gets its own, and Redis keeps every loaded script until `SCRIPT
 * FLUSH`; rules come from configuration, so this bound is only reached by an app that builds
 * algorithms per request, whose requests then take the general script.
 */
export const MAX_RULE_SET_SCRIPTS = 256

/**
 * The most rules a rule-set script decides per request (its source grows with each, and Lua
 * allows a function 200 locals). A request charging more takes the general script.
 */
export const MAX_RULES_PER_SCRIPT = 8

export type ChargePreparer = {
  /** Validates a charge and builds its key and arguments for the general scripts. */
  prepare(charge: Charge): PreparedCharge
  /** Validates a charge and returns its Redis key. */
  keyOf(charge: Charge): string
  /** The one-rule script of the charge's algorithm, if it has one (call after `keyOf`). */
  oneRuleScript(charge: Charge): Script | undefined
  /**
   * The rule-set script of several charges (their algorithms and shadow flags, in order), if
   * they have one (call after `keyOf` on each).
   */
  ruleSetScript(charges: readonly Charge[]): Script | undefined
  /** Every rule-set script made so far, one-rule scripts included. */
  ruleSetScripts(): readonly Script[]
}

/** Validates charges and builds their keys and arguments, caching what depends only on rules. */
export function chargePreparer(
  prefix: string,
  clock: { readonly serverTime: boolean; readonly marginMs: number },
): ChargePreparer {
  const ruleKeyPrefixes = new Map<string, string>()
  const plans = new WeakMap<Algorithm, AlgorithmPlan>()
  let plansMade = 0
  // By source, so that equal rules share one script (and one batch of requests).
  const scriptsBySource = new Map<string, Script>()
  // By the ids and shadow flags of a request's algorithms: what a request looks up. `null`: past
  // the bound on scripts, so the general script serves that set (remembered, not rebuilt).
  const ruleSets = new Map<string, Script | null>()

  function ruleKeyPrefix(rule: string): string {
    let cached = ruleKeyPrefixes.get(rule)
    if (cached === undefined) {
      cached = `${prefix}:${encodeRule(rule)}:{`
      // Rule ids come from configuration, so this map stays small; the bound is a safety net.
      if (ruleKeyPrefixes.size < 10_000) ruleKeyPrefixes.set(rule, cached)
    }
    return cached
  }

  function scriptOf(rules: RuleSetShape['rules']): Script | undefined {
    const source = ruleSetLua({ rules, ...clock })
    let found = scriptsBySource.get(source)
    if (found === undefined && scriptsBySource.size < MAX_RULE_SET_SCRIPTS) {
      found = script(source)
      scriptsBySource.set(source, found)
    }
    return found
  }

  function planOf(charge: Charge): AlgorithmPlan {
    let plan = plans.get(charge.algorithm)
    if (plan === undefined) {
      const lua = luaOf(charge)
      const args = scriptArgs(lua, charge.algorithm)
      const oneRule = scriptOf([{ algorithm: lua, params: paramsOf(args), shadow: false }])
      plan = { id: plansMade++, lua, args, oneRule }
      plans.set(charge.algorithm, plan)
    }
    return plan
  }

  function ruleSetScript(charges: readonly Charge[]): Script | undefined {
    if (charges.length > MAX_RULES_PER_SCRIPT) return undefined
    let id = ''
    for (const charge of charges) id += `${planOf(charge).id}${charge.shadow ? 's' : ''},`
    const known = ruleSets.get(id)
    if (known !== undefined) return known ?? undefined
    // Sets of algorithm objects made per request would never repeat: stop remembering them.
    if (ruleSets.size >= MAX_RULE_SET_SCRIPTS * 4) return undefined
    const found = scriptOf(
      charges.map((charge) => {
        const { lua, args } = planOf(charge)
        return { algorithm: lua, params: paramsOf(args), shadow: charge.shadow }
      }),
    )
    ruleSets.set(id, found ?? null)
    return found
  }

  function keyOf(charge: Charge): string {
    checkCost(charge.cost)
    planOf(charge)
    if (charge.cost > charge.algorithm.limit) {
      throw new RateLimitError(
        'ERR_RL_COST_EXCEEDS_CAPACITY',
        `a cost of ${charge.cost} can never pass rule ${charge.rule}, whose capacity is ${charge.algorithm.limit}`,
        { rule: charge.rule, field: 'cost' },
      )
    }
    return `${ruleKeyPrefix(charge.rule)}${encodeKey(charge.key)}}`
  }

  return {
    keyOf,
    oneRuleScript: (charge) => planOf(charge).oneRule,
    ruleSetScript,
    ruleSetScripts: () => [...scriptsBySource.values()],
    prepare(charge) {
      const key = keyOf(charge)
      const [code, p1, p2, p3] = planOf(charge).args
      return {
        key,
        // The hash tag: what lies between the rule prefix's `{` and the closing `}`.
        tag: key.slice(ruleKeyPrefix(charge.rule).length, -1),
        args: [code!, String(charge.cost), charge.shadow ? '1' : '0', p1!, p2!, p3!],
      }
    },
  }
}

/** The parameters of [code, p1, p2, p3]. */
function paramsOf(args: readonly string[]): readonly [string, string, string] {
  return [args[1]!, args[2]!, args[3]!]
}

function luaOf(charge: Charge): LuaAlgorithm {
  const lua = luaAlgorithmNamed(charge.algorithm.name)
  const params = charge.algorithm.params
  if (lua === undefined || params === undefined || params.kind !== lua.kind) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `the Redis store runs only the built-in algorithms (token_bucket, gcra, leaky_bucket, fixed_window, sliding_log, sliding_window) with their parameters; got ${JSON.stringify(charge.algorithm.name)}`,
      { rule: charge.rule, field: 'algorithm' },
    )
  }
  return lua
}

/** [code, p1, p2, p3] for an algorithm the scripts know, from its scaled integer parameters. */
function scriptArgs(lua: LuaAlgorithm, algorithm: Algorithm): readonly string[] {
  const params = algorithm.params!
  const code = String(lua.code)
  if (params.kind === 'rate') {
    return [code, String(params.unitsPerMs), String(params.unitsPerToken), String(params.capacity)]
  }
  if (params.kind === 'window') return [code, String(params.limit), String(params.windowMs), '0']
  throw new RateLimitError('ERR_RL_INVALID_RULE', `no script runs ${algorithm.name}`)
}
