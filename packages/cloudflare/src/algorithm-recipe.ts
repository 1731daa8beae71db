import { type Algorithm, type AlgorithmName, RateLimitError } from '@tollgate/core/store'

/**
 * An algorithm as data: the built-in factory's name and the parameters it is called with. An
 * `Algorithm` holds functions, which cannot travel to a Durable Object; its factory and
 * parameters can, and the object builds the same algorithm from them (`rebuildAlgorithm`).
 */
export type AlgorithmRecipe = {
  readonly name: AlgorithmName
  readonly params: Readonly<Record<string, number | string>>
}

const recipes = new WeakMap<Algorithm, AlgorithmRecipe>()

/**
 * The recipe of a built-in algorithm, read back from its scaled parameters (`params`) and its
 * policy, which hold the factory's own figures. Throws `ERR_RL_INVALID_RULE` for an algorithm
 * the object cannot rebuild: one of the app's own, or a concurrency limit (see `unsupported`).
 */
export function recipeOf(algorithm: Algorithm, rule: string): AlgorithmRecipe {
  let recipe = recipes.get(algorithm)
  if (recipe === undefined) {
    recipe = { name: algorithm.name, params: paramsOf(algorithm, rule) }
    recipes.set(algorithm, recipe)
  }
  return recipe
}

function paramsOf(algorithm: Algorithm, rule: string): AlgorithmRecipe['params'] {
  const { name, params, policy } = algorithm
  if (params?.kind === 'rate') {
    // The policy is the rate as written (100 per 60 s); params hold it in lowest terms.
    const rate = { rate: policy.quota, periodMs: policy.windowMs, burst: params.burst }
    if (name !== 'leaky_queue') return rate
    const { delayTicks = 0, maxWaitTicks = Number.POSITIVE_INFINITY } = params
    const delay = delayTicks / params.unitsPerToken
    if (!Number.isFinite(maxWaitTicks)) return { ...rate, delay }
    return { ...rate, delay, maxWaitMs: maxWaitTicks / params.unitsPerMs }
  }
  if (params?.kind === 'window') {
    const { limit, windowMs, calendar, anchor, buckets } = params
    if (calendar !== undefined) {
      return { limit, calendar: calendar.unit, timeZone: calendar.timeZone }
    }
    if (anchor !== undefined) return { limit, windowMs, anchor }
    if (buckets !== undefined) return { limit, windowMs, buckets }
    return { limit, windowMs }
  }
  throw unsupported(algorithm, rule)
}

function unsupported(algorithm: Algorithm, rule: string): RateLimitError {
  const why =
    algorithm.name === 'concurrency'
      ? 'a concurrency slot held by a Worker that is evicted before its response ends would never be given back; keep concurrency rules on the memory store'
      : `it runs only the built-in algorithms, rebuilt from their parameters; got ${JSON.stringify(algorithm.name)}`
  return new RateLimitError('ERR_RL_INVALID_RULE', `durableObjectStore(): ${why}`, {
    rule,
    field: 'algorithm',
  })
}
