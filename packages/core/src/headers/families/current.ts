import { effectiveWindowSeconds, type HeaderFamily, isListed } from '../config.js'

/**
 * Drafts 8 to 11 (one syntax): `RateLimit-Policy: "name";q=…;w=…` and `RateLimit:
 * "name";r=…;t=…`, one List member per matching rule (enforcing ones, unless `shadowPolicies`),
 * each with its `pk` when partition keys are on.
 */
export const CURRENT = {
  standardHeaders: ['draft-8', 'draft-9', 'draft-10', 'draft-11'],
  partitionKeys: true,
  names: ['RateLimit', 'RateLimit-Policy'],
  singleValued: [],
  merged: ['ratelimit-policy'],
  write(writer, verdict, _now, config, partitionKeyOf) {
    let policies = ''
    let limits = ''
    const decisions = verdict.decisions
    for (let i = 0; i < decisions.length; i++) {
      const decision = decisions[i]!
      if (!isListed(decision, config.shadowPolicies)) continue
      const fields = config.policyFields(decision)
      const pk = partitionKeyOf?.(decision)
      const pkParam = pk === undefined ? '' : `;pk=${pk}`
      const separator = policies === '' ? '' : ', '
      policies += separator + fields.policyItem + pkParam
      // Slots in flight come back when requests end, at no time anyone can tell: an admitted
      // concurrency decision has no `t`. One template each: no string is made for `t` alone.
      limits +=
        decision.allowed && decision.policy.unit !== undefined
          ? `${separator}${fields.rateItemPrefix}${decision.remaining}${pkParam}`
          : `${separator}${fields.rateItemPrefix}${decision.remaining};t=${effectiveWindowSeconds(decision)}${pkParam}`
    }
    if (policies === '') return 0
    writer.write('RateLimit-Policy', policies)
    writer.write('RateLimit', limits)
    return 2
  },
} as const satisfies HeaderFamily
