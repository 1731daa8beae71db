import type { Verdict } from '../limiter/types.js'
import type { HeaderConfig, PartitionKeyOf } from './config.js'
import { familyFieldNames } from './families/index.js'
import type { FieldWriter } from './types.js'

/**
 * The rate-limit fields for a verdict (no `Retry-After`: that belongs to denials only), as
 * `writeRateLimitFields` writes them.
 */
export function rateLimitHeaders(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  partitionKeyOf?: PartitionKeyOf,
): Array<readonly [string, string]> {
  const entries = new EntryList()
  writeRateLimitFields(verdict, now, config, entries, partitionKeyOf)
  return entries.list
}

/**
 * Writes a verdict's rate-limit fields one by one and returns how many: each family's, in
 * order. Single-valued fields (`X-RateLimit-*`, draft-6, draft-7) describe the verdict's
 * `deciding` rule; the current form lists every matching rule (enforcing ones unless
 * `shadowPolicies`), each with its `pk` when `partitionKeyOf` gives one.
 */
export function writeRateLimitFields(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  writer: FieldWriter,
  partitionKeyOf?: PartitionKeyOf,
): number {
  const families = config.families
  let written = 0
  for (let i = 0; i < families.length; i++)
    written += families[i]!.write(writer, verdict, now, config, partitionKeyOf)
  return written
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
