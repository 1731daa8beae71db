import type { RuleConfig } from '@tollgate/core'

/**
 * The rules the metrics tests count a scripted trace under: a token bucket of 2 refilled once a
 * second per IP, and a login rule of 1 a minute dark-launched in shadow mode.
 */
export const METRIC_RULES: readonly RuleConfig[] = [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1s',
    burst: 2,
  },
  {
    id: 'new-login',
    match: { identity: 'ip', route: ['POST /login'] },
    algorithm: 'fixed_window',
    limit: 1,
    window: '1m',
    mode: 'shadow',
  },
]

/**
 * A concurrency rule of one slot with a line of two, for requests that wait for a slot: the
 * one that gets it counts as `queued`, one whose wait runs out (`maxWait`, 2 s) as `shed`.
 */
export const SLOT_WAIT_RULES: readonly RuleConfig[] = [
  {
    id: 'reports',
    match: { route: ['GET /block/*'] },
    algorithm: 'concurrency',
    limit: 1,
    queue: 2,
    maxWait: '2s',
  },
]
