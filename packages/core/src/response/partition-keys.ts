import type { HeaderFamily, PartitionKeyOf } from '../headers/families.js'
import { createPartitionKeyHasher } from '../headers/partition-key.js'
import type { RuleDecision } from '../limiter/types.js'
import { invalidOption } from '../options/option-values.js'

/** What the `partitionKey` option is when it is on: `true`, or the function picking the text. */
export type PartitionKeyOption = true | ((decision: RuleDecision) => string | undefined)

/**
 * The part for the `partitionKey` option (`createRateLimit({ ..., partitionKeys })`; `rateLimit`
 * has it): compiles the option, for the families the header options turned on, into the `pk` of
 * each listed decision, hashed as the fields ask for it. `true` hashes the decision's `key`, a
 * function picks the text: a number as text; `null`, an object or '' would all hash to one `pk`
 * shared by every client, so they give none. A part rather than the responder's own, so that a
 * middleware composed without it holds neither this nor SHA-256.
 */
export function partitionKeys(
  option: PartitionKeyOption,
  families: readonly HeaderFamily[],
): PartitionKeyOf {
  // Only the families without a group send `pk` (their Lists' members carry it).
  if (families.every((family) => family.group)) {
    // A partition key nothing sends would be hashed on every request for no field.
    throw invalidOption(
      'partitionKey',
      "no field sends it: standardHeaders 'draft-8' or later does",
    )
  }
  const keyOf = option === true ? (decision: RuleDecision) => decision.key : option
  const hash = createPartitionKeyHasher()
  return (decision) => {
    const key: unknown = keyOf(decision)
    return typeof key === 'number' || (typeof key === 'string' && key !== '')
      ? hash(String(key))
      : undefined
  }
}
