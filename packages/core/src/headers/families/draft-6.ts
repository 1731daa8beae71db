import { effectiveWindowSeconds, type HeaderFamily, reportableDeciding } from '../config.js'

/**
 * Draft 6: `RateLimit-Policy` (an Item) and the three Integer fields `RateLimit-Limit`,
 * `-Remaining`, `-Reset`, for the deciding rule.
 */
export const DRAFT_6 = {
  standardHeaders: ['draft-6'],
  partitionKeys: false,
  names: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'],
  singleValued: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  merged: ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'],
  /** The fields of one rule, merged as one (lower-case). */
  group: { limit: 'ratelimit-limit', remaining: 'ratelimit-remaining', reset: 'ratelimit-reset' },
  write(writer, verdict, _now, config) {
    const deciding = reportableDeciding(verdict)
    if (deciding === undefined) return 0
    const fields = config.policyFields(deciding)
    writer.write('RateLimit-Policy', fields.legacyPolicyItem)
    writer.write('RateLimit-Limit', fields.limitText)
    writer.write('RateLimit-Remaining', String(deciding.remaining))
    writer.write('RateLimit-Reset', String(effectiveWindowSeconds(deciding)))
    return 4
  },
} as const satisfies HeaderFamily & { group: object }
