import { type HeaderFamily, reportableDeciding } from '../config.js'

/**
 * `X-RateLimit-Limit`, `-Remaining`, `-Reset`: the de facto fields (GitHub's), turned on by
 * `legacyHeaders`; the reset as an epoch second or, with `legacyReset: 'delta-seconds'`, as
 * seconds from now. They describe the deciding rule.
 */
export const X_RATELIMIT = {
  standardHeaders: [],
  partitionKeys: false,
  names: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  singleValued: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  merged: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
  /** The fields of one rule, merged as one (lower-case). */
  group: {
    limit: 'x-ratelimit-limit',
    remaining: 'x-ratelimit-remaining',
    reset: 'x-ratelimit-reset',
  },
  write(writer, verdict, now, config) {
    const deciding = reportableDeciding(verdict)
    if (deciding === undefined) return 0
    // The limit's text is made once per rule, an epoch second's once per second: every request
    // of that second sends the same.
    writer.write('X-RateLimit-Limit', config.policyFields(deciding).limitText)
    writer.write('X-RateLimit-Remaining', String(deciding.remaining))
    writer.write(
      'X-RateLimit-Reset',
      config.legacyReset === 'epoch-seconds'
        ? config.epochReset(Math.ceil((now + deciding.resetAfterMs) / 1000))
        : String(Math.max(0, Math.ceil(deciding.resetAfterMs / 1000))),
    )
    return 3
  },
} as const satisfies HeaderFamily & { group: object }
