import { type Algorithm, type Charge, checkCost, RateLimitError } from '@tollgate/core'
import { encodeKey, encodeRule } from './keys.js'
import { LUA_ALGORITHMS_BY_NAME } from './scripts/index.js'

/** A charge ready for a script call: its Redis key, hash tag and ARGV entries. */
export type PreparedCharge = {
  readonly key: string
  /** The hash tag contents (the encoded identity), for Redis Cluster slot grouping. */
  readonly tag: string
  /** [algorithm code, cost, shadow, p1, p2, p3] as the scripts read them. */
  readonly args: readonly string[]
}

/** Validates charges and builds their keys and arguments, caching what depends only on rules. */
export function chargePreparer(prefix: string): (charge: Charge) => PreparedCharge {
  const ruleKeyPrefixes = new Map<string, string>()
  const algorithmArgs = new WeakMap<Algorithm, readonly string[]>()

  function ruleKeyPrefix(rule: string): string {
    let cached = ruleKeyPrefixes.get(rule)
    if (cached === undefined) {
      cached = `${prefix}:${encodeRule(rule)}:{`
      // Rule ids come from configuration, so this map stays small; the bound is a safety net.
      if (ruleKeyPrefixes.size < 10_000) ruleKeyPrefixes.set(rule, cached)
    }
    return cached
  }

  function argsOf(charge: Charge): readonly string[] {
    let cached = algorithmArgs.get(charge.algorithm)
    if (cached === undefined) {
      cached = scriptArgs(charge)
      algorithmArgs.set(charge.algorithm, cached)
    }
    return cached
  }

  return function prepare(charge) {
    checkCost(charge.cost)
    const [code, p1, p2, p3] = argsOf(charge)
    if (charge.cost > charge.algorithm.limit) {
      throw new RateLimitError(
        'ERR_RL_COST_EXCEEDS_CAPACITY',
        `a cost of ${charge.cost} can never pass rule ${charge.rule}, whose capacity is ${charge.algorithm.limit}`,
        { rule: charge.rule, field: 'cost' },
      )
    }
    const tag = encodeKey(charge.key)
    return {
      key: `${ruleKeyPrefix(charge.rule)}${tag}}`,
      tag,
      args: [code!, String(charge.cost), charge.shadow ? '1' : '0', p1!, p2!, p3!],
    }
  }
}

/** [code, p1, p2, p3] for an algorithm the scripts know, from its scaled integer parameters. */
function scriptArgs(charge: Charge): readonly string[] {
  const { algorithm } = charge
  const lua = LUA_ALGORITHMS_BY_NAME.get(algorithm.name)
  const params = algorithm.params
  if (lua === undefined || params === undefined || params.kind !== lua.kind) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `the Redis store runs only the built-in algorithms (token_bucket, gcra, leaky_bucket, fixed_window, sliding_log, sliding_window) with their parameters; got ${JSON.stringify(algorithm.name)}`,
      { rule: charge.rule, field: 'algorithm' },
    )
  }
  const code = String(lua.code)
  if (params.kind === 'rate') {
    return [code, String(params.unitsPerMs), String(params.unitsPerToken), String(params.capacity)]
  }
  return [code, String(params.limit), String(params.windowMs), '0']
}
