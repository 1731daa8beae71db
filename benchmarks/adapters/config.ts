import type { RuleConfig } from '@tollgate/core'

/**
 * One rule for every limiter, generous enough that no request of a run is denied: the
 * benchmark measures the admitted path, which is what nearly all traffic takes.
 */
export const LIMIT = 1_000_000_000
export const WINDOW_MS = 60_000

/** Tollgate with its default counting rule and default headers (X-RateLimit-* and RateLimit). */
export const TOLLGATE_RULES: readonly RuleConfig[] = [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: LIMIT,
    period: `${WINDOW_MS}ms`,
    burst: LIMIT,
  },
]

export type VariantName =
  | 'bare'
  | 'naive'
  | 'fields only'
  | 'tollgate'
  | 'tollgate, partition key'
  | 'tollgate, same headers'
  | 'peer'

/**
 * The two fields Tollgate sends by default, with typical values: a middleware that only writes
 * them shows what the fields themselves cost in each framework, limiting aside.
 */
export const DEFAULT_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['RateLimit-Policy', '"per-ip";q=1000000000;w=60'],
  ['RateLimit', '"per-ip";r=999999999;t=1'],
]
