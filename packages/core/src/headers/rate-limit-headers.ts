import type { RuleDecision, Verdict } from '../limiter/types.js'
import { effectiveWindowSeconds, type HeaderConfig, isListed } from './config.js'
import { familyFieldNames } from './families/index.js'
import type { FieldWriter } from './types.js'

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
  const out: Array<readonly [string, string]> = []
  const families = config.families
  for (let i = 0; i < families.length; i++)
    families[i]!.write(out, verdict, now, config, partitionKeys)
  return out
}

/**
 * Writes the fields `rateLimitHeaders` returns, in the same order. The default fields of one
 * rule (what most requests send) are written straight, with their constant values made once
 * per rule or per second and no entries built; anything else goes through `rateLimitHeaders`.
 * `partitionKeys` as for `rateLimitHeaders`.
 */
export function writeRateLimitFields(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  writer: FieldWriter,
  partitionKeys?: ReadonlyMap<string, string>,
): number {
  if (!hasDefaultFieldsOfOneRule(verdict, config)) {
    const headers = rateLimitHeaders(verdict, now, config, partitionKeys)
    // Read by index: destructuring an array runs its iterator, an object per entry.
    for (let i = 0; i < headers.length; i++) writer.write(headers[i]![0], headers[i]![1])
    return headers.length
  }
  const decision = verdict.deciding!
  const fields = config.policyFields(decision)
  const remaining = String(decision.remaining)
  const pk = partitionKeys?.get(decision.rule)
  writer.write('X-RateLimit-Limit', fields.limitText)
  writer.write('X-RateLimit-Remaining', remaining)
  writer.write('X-RateLimit-Reset', config.epochReset(resetSecond(decision, now)))
  // Adding '' to a string hands back the same string: no copy without a partition key.
  const pkParam = pk === undefined ? '' : `;pk=${pk}`
  writer.write('RateLimit-Policy', fields.policyItem + pkParam)
  writer.write(
    'RateLimit',
    `${fields.rateItemPrefix}${remaining};t=${effectiveWindowSeconds(decision)}${pkParam}`,
  )
  return 5
}

/**
 * True for the default fields (X-RateLimit-* in epoch seconds, current form) of one listed rule
 * over time (a concurrency rule's fields take the general path).
 */
function hasDefaultFieldsOfOneRule(verdict: Verdict, config: HeaderConfig): boolean {
  const deciding = verdict.deciding
  return (
    deciding !== undefined &&
    deciding.policy.unit === undefined &&
    config.defaultFamilies &&
    verdict.decisions.length === 1 &&
    isListed(deciding, config.shadowPolicies)
  )
}

function resetSecond(decision: RuleDecision, now: number): number {
  return Math.ceil((now + decision.resetAfterMs) / 1000)
}

/** Every header name a configuration can send, for `Access-Control-Expose-Headers`. */
export function headerNames(config: Pick<HeaderConfig, 'families'>): string[] {
  return [...familyFieldNames(config.families), 'Retry-After']
}
