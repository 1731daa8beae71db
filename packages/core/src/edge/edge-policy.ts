import { quotaPerSeconds } from '../headers/policy-fields.js'
import type { RuleDecision } from '../limiter/types.js'

/**
 * `createPolicyFieldCache` for the rules the edge entry takes: rate and window rules, whose ids
 * are printable ASCII (validated), so the policy name is the id and its Structured Field string
 * needs only `"` and `\` escaped. The same strings (edge.test.ts compares them).
 */
/** A rule's fixed strings, as `PolicyFields` has them. */
type EdgePolicyFields = {
  readonly quota: number
  readonly windowMs: number
  readonly limit: number
  /** The policy name: the rule id. */
  readonly name: string
  /** `"per-ip";q=10;w=1;tollgate-burst=20` */
  readonly policyItem: string
  /** `"per-ip";r=` */
  readonly rateItemPrefix: string
  /** For the problem detail: `10 per 1 s, bursts of 20`. */
  readonly description: string
}

export function createEdgePolicyFields(): (decision: RuleDecision) => EdgePolicyFields {
  const cache = new Map<string, EdgePolicyFields>()
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
      description: `${quota} per ${window}${bursts ? `, bursts of ${limit}` : ''}`,
    }
    if (cache.size >= 1000) cache.clear()
    cache.set(rule, fields)
    return fields
  }
}
