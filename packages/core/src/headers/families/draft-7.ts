import { effectiveWindowSeconds, type HeaderFamily, reportableDeciding } from '../config.js'

/**
 * Draft 7: `RateLimit-Policy` (an Item) and `RateLimit: limit=…, remaining=…, reset=…` (a
 * Dictionary), for the deciding rule. `RateLimit` holds one value here but shares its name with
 * the current draft's List, so it is merged rather than known as single-valued by name.
 */
export const DRAFT_7 = {
  standardHeaders: ['draft-7'],
  partitionKeys: false,
  names: ['RateLimit', 'RateLimit-Policy'],
  singleValued: [],
  merged: ['ratelimit', 'ratelimit-policy'],
  write(out, verdict, _now, config) {
    const deciding = reportableDeciding(verdict)
    if (deciding === undefined) return
    const reset = effectiveWindowSeconds(deciding)
    out.push(
      ['RateLimit-Policy', config.policyFields(deciding).legacyPolicyItem],
      ['RateLimit', `limit=${deciding.limit}, remaining=${deciding.remaining}, reset=${reset}`],
    )
  },
} as const satisfies HeaderFamily
