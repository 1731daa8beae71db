import { DEFAULT_SETTLE_WITHIN_MS } from '../algorithms/reservable.js'
import type { RuleFieldReader } from '../algorithms/rule-fields.js'
import type { Algorithm } from '../algorithms/types.js'
import { toMilliseconds } from './duration.js'
import type { IssueSink } from './issues.js'

/** Reads a rule's `settle` (see `validateSettle`): a part of the limiter, reservations'. */
export type SettleReader = typeof validateSettle

/**
 * A rule's `settle`: `true` for the default time to settle, a duration for its own, `false` or
 * nothing for a final charge. Refused on an algorithm whose charge cannot be settled (`params`,
 * undefined when the rule's algorithm could not be read).
 */
export function validateSettle(
  value: unknown,
  label: string,
  params:
    | { readonly algorithm: Algorithm; readonly reader?: RuleFieldReader | undefined }
    | undefined,
  issue: IssueSink,
): number | undefined {
  if (value === undefined || value === false) return undefined
  const within = value === true ? DEFAULT_SETTLE_WITHIN_MS : toMilliseconds(value)
  if (typeof within === 'string') {
    issue(label, `expected true or a duration to settle within, such as '10m': ${within}`)
    return undefined
  }
  if (params !== undefined && typeof params.algorithm.settle !== 'function') {
    const why = params.reader?.unsettled ?? 'the algorithm has no settle method'
    issue(label, `${params.algorithm.name} charges cannot be settled: ${why}; remove it`)
    return undefined
  }
  return within
}
