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
  write(out, verdict, _now, config) {
    const deciding = reportableDeciding(verdict)
    if (deciding === undefined) return
    out.push(
      ['RateLimit-Policy', config.policyFields(deciding).legacyPolicyItem],
      ['RateLimit-Limit', String(deciding.limit)],
      ['RateLimit-Remaining', String(deciding.remaining)],
      ['RateLimit-Reset', String(effectiveWindowSeconds(deciding))],
    )
  },
} as const satisfies HeaderFamily & { group: object }
