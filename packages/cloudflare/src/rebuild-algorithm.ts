import {
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { type Algorithm, RateLimitError } from '@tollgate/core/store'
import type { AlgorithmRecipe } from './algorithm-recipe.js'

// biome-ignore lint/suspicious/noExplicitAny: each factory checks its own parameters
type Factory = (params: any) => Algorithm

/** The factories a recipe may name: the built-in counting rules (no concurrency: see recipeOf). */
const FACTORIES: Readonly<Record<string, Factory>> = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  leaky_queue: leakyQueue,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
}

/**
 * The algorithms an object has built, by recipe text: built once per rule, not per request.
 * Bounded, as rules come from configuration and a caller could send any recipe.
 */
const MAX_BUILT = 256

/** Builds, or finds built, the algorithm of `recipe` (its text `text`), with core's factory. */
export function algorithmBuilder(): (recipe: AlgorithmRecipe, text: string) => Algorithm {
  const built = new Map<string, Algorithm>()
  return (recipe, text) => {
    let algorithm = built.get(text)
    if (algorithm !== undefined) return algorithm
    const factory = Object.hasOwn(FACTORIES, recipe.name) ? FACTORIES[recipe.name] : undefined
    if (factory === undefined) {
      throw new RateLimitError(
        'ERR_RL_INVALID_RULE',
        `TollgateLimiter: no built-in algorithm named ${JSON.stringify(recipe.name)}`,
        { field: 'algorithm' },
      )
    }
    algorithm = factory(recipe.params)
    if (built.size >= MAX_BUILT) built.clear()
    built.set(text, algorithm)
    return algorithm
  }
}
