import { type Algorithm, RateLimitError, type RuleChange } from '@tollgate/core/store'
import { carriesOnRedis } from './algorithm-plans.js'
import { luaAlgorithmNamed } from './scripts/registry.js'

/**
 * `updateRules` of the Redis store. Nothing is rewritten at update time: each key is carried by
 * the scripts the next time it is charged, refunded, settled or looked at, because its state
 * keeps the version and figures it was written under (scripts/carry.lua.ts). What the store
 * checks here is that it can: a change is refused, naming the rule and field, when
 *
 * - the rule's states are not one string the scripts carry (a sliding log, a calendar window,
 *   a sliding window of 25 to 30 sub-windows in the identity layout, whose state fits the
 *   identity value only without its version);
 * - the rule does not declare a `version`, before and after, that rises with the change: the
 *   version is what tells every process which figures are the newer ones.
 *
 * A concurrency rule's leases carry as they are (each is given back whatever the new limit), so
 * its limit changes without a version. Removed rules' states expire by themselves.
 */
export async function checkRuleChanges(
  changes: readonly RuleChange[],
  identityLayout: boolean,
): Promise<void> {
  for (const { rule, from, to } of changes) {
    if (from.name === 'concurrency' && to.name === 'concurrency') continue
    for (const algorithm of [from, to]) {
      if (!carried(algorithm, identityLayout)) {
        throw new RateLimitError(
          'ERR_RL_INVALID_RULE',
          `rule "${rule}": the Redis store cannot carry ${nameOf(algorithm)}'s states across a change of its figures; keep it as it is, or change it under a new id`,
          { rule, field: 'algorithm' },
        )
      }
    }
    const before = from.versioned?.version
    const after = to.versioned?.version
    if (before === undefined || after === undefined || after <= before) {
      const running = before === undefined ? 'none' : String(before)
      throw new RateLimitError(
        'ERR_RL_INVALID_RULE',
        `rule "${rule}": version: its figures change, so on Redis it needs a version above the running one (${running}), kept beside each state so that a process still on the old figures never rolls it back; give the rule a version before changing its figures (docs/concepts/changing-rules-while-running.md)`,
        { rule, field: 'version' },
      )
    }
  }
}

/**
 * `carryFigures` of the Redis store: per-client figures ride on the same versioned states as a
 * rule's changes (each request's figures are the figures the scripts carry a key into), so a
 * rule whose states do not carry here is refused at start-up, naming it. `own` is the rule's
 * algorithm with the version its keys are kept under.
 */
export function checkFiguredRule(rule: string, own: Algorithm, identityLayout: boolean): void {
  if (carried(own, identityLayout)) return
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    `rule "${rule}": takes its figures per client, but the Redis store cannot carry ${nameOf(own)}'s states between figures; per-client figures on Redis are for token_bucket, gcra, leaky_bucket, fixed_window and sliding_window rules (not calendar windows)`,
    { rule, field: 'algorithm' },
  )
}

function carried(algorithm: Algorithm, identityLayout: boolean): boolean {
  const lua = luaAlgorithmNamed(algorithm.name)
  const params = algorithm.params
  const calendar = params?.kind === 'window' ? params.calendar : undefined
  return lua !== undefined && carriesOnRedis(lua, algorithm, calendar, identityLayout)
}

function nameOf(algorithm: Algorithm): string {
  const params = algorithm.params
  if (params?.kind !== 'window') return `a ${algorithm.name}`
  if (params.calendar !== undefined) return 'a calendar window'
  // The identity layout keeps a state of up to 30 sub-windows in the identity value, but only
  // up to 24 with the version and figures beside it.
  return params.buckets === undefined
    ? `a ${algorithm.name}`
    : `a ${algorithm.name} of ${params.buckets} sub-windows in the identity layout`
}
