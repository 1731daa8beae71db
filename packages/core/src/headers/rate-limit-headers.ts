import type { RuleDecision, Verdict } from '../limiter/types.js'
import type { PolicyFields } from './policy-fields.js'
import type { FieldWriter } from './types.js'

/**
 * Which IETF RateLimit fields to send (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`;
 * - `'draft-7'`: `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`;
 * - `'draft-8'` to `'draft-11'` (one syntax): `RateLimit-Policy: "name";q=…;w=…` and
 *   `RateLimit: "name";r=…;t=…`, one list member per policy.
 */
export type StandardHeaders =
  | 'draft-6'
  | 'draft-7'
  | 'draft-8'
  | 'draft-9'
  | 'draft-10'
  | 'draft-11'

/** How `X-RateLimit-Reset` is written. */
export type LegacyReset = 'epoch-seconds' | 'delta-seconds'

/** The header options after parsing, with the per-rule string cache. */
export type HeaderConfig = {
  readonly legacyHeaders: boolean
  readonly legacyReset: LegacyReset
  readonly standardHeaders: StandardHeaders | false
  readonly shadowPolicies: boolean
  readonly policyFields: (decision: RuleDecision) => PolicyFields
  /** An epoch second as text, for `X-RateLimit-Reset` (`createEpochResetCache`). */
  readonly epochReset: (second: number) => string
}

/**
 * `X-RateLimit-Reset` values in epoch seconds: every request within one second (and under one
 * window) sends the same value, so its text is made once per second.
 */
export function createEpochResetCache(): (second: number) => string {
  let second = Number.NaN
  let text = ''
  return (next) => {
    if (next !== second) {
      second = next
      text = String(next)
    }
    return text
  }
}

/** `Retry-After` delay-seconds: whole seconds rounded up, at least 1 (0 would invite a retry storm). */
export function retryAfterSeconds(ms: number | undefined): number {
  return Math.max(1, Math.ceil((ms ?? 0) / 1000))
}

/** Seconds until a decision's quota is back: its retry time when denied, else until full. */
export function effectiveWindowSeconds(decision: RuleDecision): number {
  return decision.allowed
    ? Math.max(0, Math.ceil(decision.resetAfterMs / 1000))
    : retryAfterSeconds(decision.retryAfterMs)
}

/**
 * False for the decisions the limiter made up rather than read from the store: a fail-closed
 * denial while the store is down (`storeFailed`), and a missing-identity denial (denied with no
 * retry time). Their figures describe no real quota, so no header reports them.
 */
export function isReportable(decision: RuleDecision): boolean {
  return decision.storeFailed !== true && (decision.allowed || decision.retryAfterMs !== undefined)
}

/** True for the decisions that the current-form list shows. */
export function isListed(decision: RuleDecision, shadowPolicies: boolean): boolean {
  return (decision.mode === 'enforce' || shadowPolicies) && isReportable(decision)
}

/**
 * The rate-limit fields for a verdict (no `Retry-After`: that belongs to denials only).
 * Single-valued fields (`X-RateLimit-*`, draft-6, draft-7) describe the verdict's `deciding`
 * rule; the current form lists every matching rule (enforcing ones unless `shadowPolicies`).
 * `partitionKeys` maps rule id → serialized `pk` byte sequence.
 */
export function rateLimitHeaders(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  partitionKeys?: ReadonlyMap<string, string>,
): Array<readonly [string, string]> {
  const deciding = verdict.deciding
  const standard = config.standardHeaders
  const out: Array<readonly [string, string]> = []
  if (deciding !== undefined && isReportable(deciding)) {
    const limit = String(deciding.limit)
    const remaining = String(deciding.remaining)
    if (config.legacyHeaders) {
      const reset =
        config.legacyReset === 'epoch-seconds'
          ? Math.ceil((now + deciding.resetAfterMs) / 1000)
          : Math.max(0, Math.ceil(deciding.resetAfterMs / 1000))
      out.push(
        ['X-RateLimit-Limit', limit],
        ['X-RateLimit-Remaining', remaining],
        ['X-RateLimit-Reset', String(reset)],
      )
    }
    if (standard === 'draft-6' || standard === 'draft-7') {
      const reset = String(effectiveWindowSeconds(deciding))
      out.push(['RateLimit-Policy', config.policyFields(deciding).legacyPolicyItem])
      if (standard === 'draft-6') {
        out.push(
          ['RateLimit-Limit', limit],
          ['RateLimit-Remaining', remaining],
          ['RateLimit-Reset', reset],
        )
      } else {
        out.push(['RateLimit', `limit=${limit}, remaining=${remaining}, reset=${reset}`])
      }
    }
  }
  if (isCurrentForm(standard)) {
    let policies = ''
    let limits = ''
    for (const decision of verdict.decisions) {
      if (!isListed(decision, config.shadowPolicies)) continue
      const fields = config.policyFields(decision)
      const pk = partitionKeys?.get(decision.rule)
      const pkParam = pk === undefined ? '' : `;pk=${pk}`
      const separator = policies === '' ? '' : ', '
      policies += separator + fields.policyItem + pkParam
      limits += `${separator}${fields.rateItemPrefix}${decision.remaining};t=${effectiveWindowSeconds(decision)}${pkParam}`
    }
    if (policies !== '') out.push(['RateLimit-Policy', policies], ['RateLimit', limits])
  }
  return out
}

function isCurrentForm(standard: StandardHeaders | false): boolean {
  return standard !== false && standard !== 'draft-6' && standard !== 'draft-7'
}

/**
 * Writes the fields `rateLimitHeaders` returns, in the same order. The default fields of one
 * rule (what most requests send) are written straight, with their constant values made once
 * per rule or per second and no entries built; anything else goes through `rateLimitHeaders`.
 * No `pk` parameters.
 */
export function writeRateLimitFields(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  writer: FieldWriter,
): number {
  if (!hasDefaultFieldsOfOneRule(verdict, config)) {
    const headers = rateLimitHeaders(verdict, now, config)
    // Read by index: destructuring an array runs its iterator, an object per entry.
    for (let i = 0; i < headers.length; i++) writer.write(headers[i]![0], headers[i]![1])
    return headers.length
  }
  const decision = verdict.deciding!
  const fields = config.policyFields(decision)
  const remaining = String(decision.remaining)
  writer.write('X-RateLimit-Limit', fields.limitText)
  writer.write('X-RateLimit-Remaining', remaining)
  writer.write('X-RateLimit-Reset', config.epochReset(resetSecond(decision, now)))
  writer.write('RateLimit-Policy', fields.policyItem)
  writer.write(
    'RateLimit',
    `${fields.rateItemPrefix}${remaining};t=${effectiveWindowSeconds(decision)}`,
  )
  return 5
}

/** True for the default fields (X-RateLimit-* in epoch seconds, current form) of one listed rule. */
function hasDefaultFieldsOfOneRule(verdict: Verdict, config: HeaderConfig): boolean {
  const deciding = verdict.deciding
  return (
    deciding !== undefined &&
    config.legacyHeaders &&
    config.legacyReset === 'epoch-seconds' &&
    isCurrentForm(config.standardHeaders) &&
    verdict.decisions.length === 1 &&
    isListed(deciding, config.shadowPolicies)
  )
}

function resetSecond(decision: RuleDecision, now: number): number {
  return Math.ceil((now + decision.resetAfterMs) / 1000)
}

/** Every header name a configuration can send, for `Access-Control-Expose-Headers`. */
export function headerNames(config: Omit<HeaderConfig, 'policyFields' | 'epochReset'>): string[] {
  const names: string[] = []
  if (config.legacyHeaders)
    names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset')
  if (config.standardHeaders === 'draft-6') {
    names.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy')
  } else if (config.standardHeaders !== false) {
    names.push('RateLimit', 'RateLimit-Policy')
  }
  names.push('Retry-After')
  return names
}
