import { RateLimitError } from '../errors.js'
import type { Limiter, MaybePromise, RulesUpdate, UpdateOptions } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'

/**
 * A middleware's `update(rules)`: the limiter's `update`, told what the kit was made to serve
 * (the identities it reads, whether it gives slots back), so that a rule it cannot serve is
 * refused as the limiter refuses one.
 */
export function kitUpdate(
  limiter: Limiter,
  served: UpdateOptions,
): (rules: readonly RuleConfig[]) => MaybePromise<RulesUpdate> {
  return (rules) => {
    if (limiter.update === undefined) {
      throw new RateLimitError(
        'ERR_RL_INVALID_OPTION',
        "update: this limiter cannot change its rules while running (one made by observedLimiter, or a middleware composed without update: rulesUpdater in createRateLimit's parts)",
        { field: 'update' },
      )
    }
    return limiter.update(rules, served)
  }
}
