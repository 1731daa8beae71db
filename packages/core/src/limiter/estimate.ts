import { costTooHigh } from '../algorithms/params.js'
import { checkCost } from '../algorithms/step.js'
import { RateLimitError } from '../errors.js'
import type { CompiledRule } from './compile-rule.js'
import type { RuleCosts } from './costs.js'

/**
 * A request's estimate (`DecideOptions.estimate`) as the cost of a rule with `settle`, checked:
 * the caller's bug (not a whole number) or a request that could never pass (above the rule's
 * capacity) throws, naming the rule, rather than reach the store.
 */
export function estimateFor(
  rule: Pick<CompiledRule, 'id' | 'algorithm'>,
  estimate: number,
): number {
  try {
    checkCost(estimate)
  } catch {
    throw new RateLimitError(
      'ERR_RL_INVALID_COST',
      `rule "${rule.id}": the estimate must be a whole number ≥ 0, got ${estimate}`,
      { rule: rule.id, field: 'estimate' },
    )
  }
  if (estimate > rule.algorithm.limit) {
    const error = costTooHigh(estimate, rule.algorithm.limit)
    throw new RateLimitError(
      error.code,
      `rule "${rule.id}": estimate: ${error.message.slice(11)}`,
      {
        rule: rule.id,
        field: 'estimate',
      },
    )
  }
  return estimate
}

/** A settling rule's costs: a request's estimate, checked, else its cost by route (or `cost`). */
export function estimatedCosts(
  rule: Pick<CompiledRule, 'id' | 'algorithm'>,
  byRoute: RuleCosts | undefined,
): RuleCosts {
  return {
    costOf: (method, path, fallback, estimate) =>
      estimate !== undefined
        ? estimateFor(rule, estimate)
        : byRoute === undefined
          ? fallback
          : byRoute.costOf(method, path, fallback, estimate),
  }
}
