import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Rule } from '../rules/types.js'
import { algorithmOf } from '../rules/validate-rule.js'

/**
 * The algorithm a validated rule runs, compiled as the limiter compiles it: for tools that
 * describe rules (its `stateSize`, its `limit`, its `policy`) or measure them on a store.
 */
export function algorithmOfRule(rule: Rule): Algorithm {
  return algorithmOf(rule, BUILT_IN_ALGORITHMS)
}
