import type { PolicyFields } from '../headers/policy-fields.js'
import { quotaPerSeconds } from '../headers/policy-fields.js'
import type { RuleDecision } from '../limiter/types.js'

/**
 * `createPolicyFieldCache` for the rules the edge entry takes: rate and window rules, whose ids
 * are printable ASCII (validated), so the policy name is the id and its Structured Field string
 * needs only `"` and `\` escaped. The same strings (edge.test.ts compares them).
 */
export function createEdgePolicyFields(): (decision: RuleDecision) => PolicyFields {
  const cache = new Map<string, PolicyFields>()
  return function policyFields(decision) {
    const { rule, limit, policy } = decision
    const cached = cache.get(rule)
    if (
      cached !== undefined &&
      cached.quota === policy.quota &&
      cached.windowMs === policy.windowMs &&
      cached.limit === limit
    ) {
      return cached
    }
    const { quota, windowMs } = policy
    const { q, w } = quotaPerSeconds(quota, windowMs)
    const quoted = `"${rule.replace(/["\\]/g, '\\$&')}"`
    const bursts = limit !== quota
    const window = windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`
    const fields = {
      quota,
      windowMs,
      limit,
      name: rule,
      policyItem: `${quoted};q=${q};w=${w}${bursts ? `;tollgate-burst=${limit}` : ''}`,
      rateItemPrefix: `${quoted};r=`,
      legacyPolicyItem: '',
      description: `${quota} per ${window}${bursts ? `, bursts of ${limit}` : ''}`,
      limitText: String(limit),
    }
    if (cache.size >= 1000) cache.clear()
    cache.set(rule, fields)
    return fields
  }
}
