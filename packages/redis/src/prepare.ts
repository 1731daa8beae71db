import { type Algorithm, type Charge, checkCost, RateLimitError } from '@tollgate/core'
import { encodeKey, encodeRule } from './keys.js'
import { LUA_ALGORITHMS_BY_NAME, type Script, script } from './scripts/index.js'
import type { LuaAlgorithm } from './scripts/lua-algorithm.js'
import { oneChargeLua } from './scripts/one-charge.lua.js'

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
  /** [code, p1, p2, p3] as the general scripts read them. */
  readonly args: readonly string[]
  /** Its own one-charge script, or undefined past the bound (the general script serves it). */
  readonly oneCharge: Script | undefined
}

/**
 * One-charge scripts a store makes at most. Each distinct rule (algorithm and parameters) gets
 * its own, and Redis keeps every loaded script until `SCRIPT FLUSH`; rules come from
 * configuration, so this bound is only reached by an app that builds algorithms per request,
 * whose requests then take the general script.
 */
export const MAX_ONE_CHARGE_SCRIPTS = 256

export type ChargePreparer = {
  /** Validates a charge and builds its key and arguments for the general scripts. */
  prepare(charge: Charge): PreparedCharge
  /** Validates a charge and returns its Redis key. */
  keyOf(charge: Charge): string
  /** The one-charge script of the charge's algorithm, if it has one (call after `keyOf`). */
  oneChargeScript(charge: Charge): Script | undefined
  /** Every one-charge script made so far. */
  oneChargeScripts(): readonly Script[]
}

/** Validates charges and builds their keys and arguments, caching what depends only on rules. */
export function chargePreparer(
  prefix: string,
  clock: { readonly serverTime: boolean; readonly marginMs: number },
): ChargePreparer {
  const ruleKeyPrefixes = new Map<string, string>()
  const plans = new WeakMap<Algorithm, AlgorithmPlan>()
  const oneChargeScripts = new Map<string, Script>()

  function ruleKeyPrefix(rule: string): string {
    let cached = ruleKeyPrefixes.get(rule)
    if (cached === undefined) {
      cached = `${prefix}:${encodeRule(rule)}:{`
      // Rule ids come from configuration, so this map stays small; the bound is a safety net.
      if (ruleKeyPrefixes.size < 10_000) ruleKeyPrefixes.set(rule, cached)
    }
    return cached
  }

  function oneChargeScriptOf(lua: LuaAlgorithm, args: readonly string[]): Script | undefined {
    const source = oneChargeLua({
      algorithm: lua,
      params: [args[1]!, args[2]!, args[3]!],
      ...clock,
    })
    let found = oneChargeScripts.get(source)
    if (found === undefined && oneChargeScripts.size < MAX_ONE_CHARGE_SCRIPTS) {
      found = script(source)
      oneChargeScripts.set(source, found)
    }
    return found
  }

  function planOf(charge: Charge): AlgorithmPlan {
    let plan = plans.get(charge.algorithm)
    if (plan === undefined) {
      const lua = luaOf(charge)
      const args = scriptArgs(lua, charge.algorithm)
      plan = { args, oneCharge: oneChargeScriptOf(lua, args) }
      plans.set(charge.algorithm, plan)
    }
    return plan
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
    oneChargeScript: (charge) => planOf(charge).oneCharge,
    oneChargeScripts: () => [...oneChargeScripts.values()],
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

function luaOf(charge: Charge): LuaAlgorithm {
  const lua = LUA_ALGORITHMS_BY_NAME.get(charge.algorithm.name)
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
  return [code, String(params.limit), String(params.windowMs), '0']
}
