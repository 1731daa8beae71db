import type { Limiter, MaybePromise, RulesUpdate, UpdateOptions } from '../limiter/types.js'
import { invalidOption } from '../options/option-values.js'
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
      throw invalidOption(
        'update',
        "not on this limiter: add update: rulesUpdater to createRateLimit's parts",
      )
    }
    return limiter.update(rules, served)
  }
}
