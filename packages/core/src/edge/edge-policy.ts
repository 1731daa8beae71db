import { quotaPerSeconds } from '../headers/policy-fields.js'
import type { RuleDecision } from '../limiter/types.js'

/**
 * `createPolicyFieldCache` for the rules the edge entry takes: rate and window rules, whose ids
 * are letters, digits, `.`, `_` and `-` (validated), so the policy name is the id, quoted as a
 * Structured Field string as it is. The same strings (edge.test.ts compares them).
 */

/** A rule's fixed strings, as `PolicyFields` has them. */
type EdgePolicyFields = {
  /** The policy name: the rule id. */
  readonly name: string
  /** `"per-ip";q=10;w=1;tollgate-burst=20` */
  readonly policyItem: string
  /** `"per-ip";r=` */
  readonly rateItemPrefix: string
  /** For the problem detail: `10 per 1 s, bursts of 20`. */
  readonly description: string
}

/**
 * One per responder, whose rules each keep one policy: the strings are kept by rule and limit
 * (the limit a store answered, which a store of its own may vary).
 */
export function createEdgePolicyFields(): (decision: RuleDecision) => EdgePolicyFields {
  const cache = new Map<string, EdgePolicyFields>()
  return function policyFields({ rule, limit, policy: { quota, windowMs } }) {
    // Rule ids hold no blank.
    const id = `${rule} ${limit}`
    let fields = cache.get(id)
    if (fields === undefined) {
      const { q, w } = quotaPerSeconds(quota, windowMs)
      const quoted = `"${rule}"`
      const bursts = limit !== quota
      const window = windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`
      fields = {
        name: rule,
        policyItem: `${quoted};q=${q};w=${w}${bursts ? `;tollgate-burst=${limit}` : ''}`,
        rateItemPrefix: `${quoted};r=`,
        description: `${quota} per ${window}${bursts ? `, bursts of ${limit}` : ''}`,
      }
      if (cache.size >= 1000) cache.clear()
      cache.set(id, fields)
    }
    return fields
  }
}
