import type { Algorithm } from '../algorithms/types.js'
import { RateLimitError } from '../errors.js'
import type { KeyTable } from './key-table.js'
import type { Charge } from './types.js'

/*
 * How the memory store finds a rule's table: by rule id, and under one id by algorithm, so a
 * rule id arriving with another algorithm never reads a state written by the other.
 */

/** Tables kept per rule id: one per algorithm it arrived with, the most recently used. */
export const TABLES_PER_RULE = 4

/**
 * The table in `list` for `algorithm` (the same rule rebuilt from the same parameters counts),
 * moved to the front; undefined when there is none.
 */
export function takeTable(list: KeyTable[], algorithm: Algorithm): KeyTable | undefined {
  for (let i = 0; i < list.length; i++) {
    const table = list[i]!
    if (table.algorithm !== algorithm && !sameRule(table.algorithm, algorithm)) continue
    table.algorithm = algorithm
    if (i > 0) {
      list.splice(i, 1)
      list.unshift(table)
    }
    return table
  }
  return undefined
}

/**
 * Two algorithm objects built from the same parameters read each other's states, unless one
 * keeps them in 8 bytes and the other wide (a rule whose charges are settled: `reservable`).
 */
export function sameRule(a: Algorithm, b: Algorithm): boolean {
  return (
    a.name === b.name &&
    (a.packed === undefined) === (b.packed === undefined) &&
    a.limit === b.limit &&
    a.stateSize === b.stateSize &&
    a.policy.quota === b.policy.quota &&
    a.policy.windowMs === b.policy.windowMs
  )
}

export function checkOneAlgorithmPerRule(charges: readonly Charge[]): void {
  for (let i = 0; i < charges.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = charges[i]!
      if (a.rule === charges[j]!.rule && !sameRule(a.algorithm, charges[j]!.algorithm)) {
        throw new RateLimitError(
          'ERR_RL_INVALID_RULE',
          `rule ${a.rule} is charged with two different algorithms in one request`,
          { rule: a.rule, field: 'algorithm' },
        )
      }
    }
  }
}
