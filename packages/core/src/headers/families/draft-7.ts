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
  write(writer, verdict, _now, config) {
    const deciding = reportableDeciding(verdict)
    if (deciding === undefined) return 0
    const reset = effectiveWindowSeconds(deciding)
    writer.write('RateLimit-Policy', config.policyFields(deciding).legacyPolicyItem)
    writer.write(
      'RateLimit',
      `limit=${deciding.limit}, remaining=${deciding.remaining}, reset=${reset}`,
    )
    return 2
  },
} as const satisfies HeaderFamily
