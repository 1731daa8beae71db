import type { Verdict } from '../limiter/types.js'
import {
  effectiveWindowSeconds,
  type HeaderConfig,
  isListed,
  type PartitionKeyOf,
} from './config.js'
import { familyFieldNames } from './families/index.js'
import type { FieldWriter } from './types.js'

/**
 * The rate-limit fields for a verdict (no `Retry-After`: that belongs to denials only). Single-
 * valued fields (`X-RateLimit-*`, draft-6, draft-7) describe the verdict's `deciding` rule; the
 * current form lists every matching rule (enforcing ones unless `shadowPolicies`), each with its
 * `pk` when `partitionKeyOf` gives one.
 */
export function rateLimitHeaders(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  partitionKeyOf?: PartitionKeyOf,
): Array<readonly [string, string]> {
  const entries = new EntryList()
  writeFamilies(verdict, now, config, entries, partitionKeyOf)
  return entries.list
}

/**
 * Writes the fields `rateLimitHeaders` returns, one by one, in the same order, and returns how
 * many. The default fields of one rule (what most requests send) are written straight: the
 * families' general path costs them about 15 ns more (a call per family, each checking the
 * decision and looking up the rule's texts again).
 */
export function writeRateLimitFields(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  writer: FieldWriter,
  partitionKeyOf?: PartitionKeyOf,
): number {
  if (!hasDefaultFieldsOfOneRule(verdict, config))
    return writeFamilies(verdict, now, config, writer, partitionKeyOf)
  const decision = verdict.deciding!
  const fields = config.policyFields(decision)
  const remaining = String(decision.remaining)
  writer.write('X-RateLimit-Limit', fields.limitText)
  writer.write('X-RateLimit-Remaining', remaining)
  writer.write(
    'X-RateLimit-Reset',
    config.epochReset(Math.ceil((now + decision.resetAfterMs) / 1000)),
  )
  const pk = partitionKeyOf?.(decision)
  // Adding '' to a string hands back the same string: no copy without a partition key.
  const pkParam = pk === undefined ? '' : `;pk=${pk}`
  writer.write('RateLimit-Policy', fields.policyItem + pkParam)
  writer.write(
    'RateLimit',
    `${fields.rateItemPrefix}${remaining};t=${effectiveWindowSeconds(decision)}${pkParam}`,
  )
  return 5
}

/** Each family's fields, in order; how many were written. */
function writeFamilies(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  writer: FieldWriter,
  partitionKeyOf: PartitionKeyOf | undefined,
): number {
  const families = config.families
  let written = 0
  for (let i = 0; i < families.length; i++)
    written += families[i]!.write(writer, verdict, now, config, partitionKeyOf)
  return written
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

/** A writer that keeps what it is given, as entries. */
class EntryList implements FieldWriter {
  readonly list: Array<readonly [string, string]> = []
  write(name: string, value: string): void {
    this.list.push([name, value])
  }
}

/** Every header name a configuration can send, for `Access-Control-Expose-Headers`. */
export function headerNames(config: Pick<HeaderConfig, 'families'>): string[] {
  return [...familyFieldNames(config.families), 'Retry-After']
}
