/**
 * Decisions and verdicts for the HTTP layer's tests, with the limiter's contract for `deciding`.
 * Not exported from the package.
 */

import type { HeaderEntries } from '../headers/types.js'
import type { Refusal, RuleDecision, Verdict } from '../limiter/types.js'

/** Header entries as an object; `RateLimit` is declared so it reads as a plain property. */
export type Sent = { readonly RateLimit?: string } & Readonly<Record<string, string | undefined>>
export const sent = (entries: HeaderEntries): Sent => Object.fromEntries(entries)

/** An enforcing rule's decision; defaults: 100 per 60 s, 99 left (0 when denied). */
export function decision(rule: string, figures: Partial<RuleDecision> = {}): RuleDecision {
  const allowed = figures.allowed ?? true
  return {
    rule,
    mode: 'enforce',
    cost: 1,
    policy: { quota: 100, windowMs: 60_000 },
    allowed,
    remaining: allowed ? 99 : 0,
    limit: figures.policy?.quota ?? 100,
    resetAfterMs: 60_000,
    retryAfterMs: allowed ? undefined : 1000,
    key: `ip:${rule}`,
    ...figures,
  }
}

/** A verdict over `decisions`, `deciding` picked as the limiter does. */
export function verdict(
  decisions: RuleDecision[],
  reason: Verdict['reason'] = 'limit',
  extra: Partial<Verdict> = {},
): Verdict {
  const enforcing = decisions.filter((d) => d.mode === 'enforce')
  const denying = enforcing.filter((d) => !d.allowed)
  const allowed = denying.length === 0
  const byRetry = (a: RuleDecision, b: RuleDecision) =>
    (b.retryAfterMs ?? 0) - (a.retryAfterMs ?? 0)
  const deciding = allowed
    ? [...enforcing].sort((a, b) => a.remaining - b.remaining)[0]
    : [...denying].sort(byRetry)[0]
  return {
    allowed,
    reason: allowed ? undefined : reason,
    decisions,
    deciding,
    shadowDenied: decisions.filter((d) => d.mode === 'shadow' && !d.allowed),
    at: 0,
    ...extra,
  }
}

/** The refusals the deny list and a penalty's `forbidAfter` put on their verdicts. */
export const REFUSALS: Readonly<Record<'deny-list' | 'forbidden', Refusal>> = {
  'deny-list': { detail: 'This client is not allowed to use this API.', code: 'deny-listed' },
  forbidden: {
    detail: 'Blocked after repeated requests over the rate limit.',
    code: 'penalty-forbidden',
  },
}
