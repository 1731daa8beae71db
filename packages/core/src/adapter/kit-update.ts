import { RateLimitError } from '../errors.js'
import type { Limiter, MaybePromise, RulesUpdate } from '../limiter/types.js'
import type { Rule, RuleConfig } from '../rules/types.js'

/** What a kit was built to do for its rules, fixed when it was made. */
export type KitReach = {
  /** Reads every identity (a limiter of the app's own), or only its rules' and lists'. */
  readonly readsAll: boolean
  readonly keysOn: (identity: string) => boolean
  /** Gives concurrency slots back at each response's end. */
  readonly releasesSlots: boolean
}

/**
 * A middleware's `update(rules)`: the limiter's `update`, with a check that the kit can serve the
 * new rules as it was built (it reads the identities its rules key on, and watches responses end
 * only when a rule holds slots). A set it cannot serve is refused as the limiter refuses one:
 * thrown, logged, counted, the running rules kept.
 */
export function kitUpdate(
  limiter: Limiter,
  reach: KitReach,
): (rules: readonly RuleConfig[]) => MaybePromise<RulesUpdate> {
  const check = (rules: readonly Rule[]) => {
    for (const rule of rules) checkServed(rule, reach)
  }
  return function update(rules) {
    if (limiter.update === undefined) {
      throw new RateLimitError(
        'ERR_RL_INVALID_OPTION',
        "update: this limiter cannot change its rules while running: a limiter of your own made by observedLimiter, or a middleware composed without the update part (add update: rulesUpdater to createRateLimit's parts)",
        { field: 'update' },
      )
    }
    return limiter.update(rules, { check })
  }
}

function checkServed(rule: Rule, reach: KitReach): void {
  const missing = reach.readsAll
    ? undefined
    : rule.match.identity.find((name) => !reach.keysOn(name))
  if (missing !== undefined) {
    throw unserved(
      rule,
      'match.identity',
      `keys on "${missing}", which this middleware was not made to read; make a new middleware for it`,
    )
  }
  if (rule.algorithm === 'concurrency' && !reach.releasesSlots) {
    throw unserved(
      rule,
      'algorithm',
      'a concurrency rule, in a middleware made without one, whose slots it would never give back; make a new middleware for it',
    )
  }
}

function unserved(rule: Rule, field: string, problem: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `rule "${rule.id}": ${field}: ${problem}`, {
    rule: rule.id,
    field,
  })
}
