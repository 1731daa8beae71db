import { heldState } from './carry-over.js'
import type { KeyTable } from './key-table.js'
import type { FiguresCarry } from './types.js'

/*
 * Per-client figures (the limiter's `figures` option), in the memory store: a rule's keys are
 * charged under figures of their own, each set of figures with its own table (as a rule changed
 * by `limiter.update` has one per set). A key lives in one of them at a time: when it is first
 * charged under figures whose table lacks it, its state is taken out of the sibling table that
 * holds it and carried (the rule's `onChange`), so no key is carried twice or counted in two
 * places.
 */

/** Tables kept per rule with per-client figures: one per set of figures in use, the most recent. */
export const FIGURE_TABLES_PER_RULE = 64

/** The tables of one rule with per-client figures, and how a key's state carries between them. */
export type Kin = {
  /** Every table of the rule (the store's own list, kept up to date by it). */
  readonly tables: readonly KeyTable[]
  readonly carry: FiguresCarry
}

/**
 * The state the key (first, second) carries into `table` from the sibling table that holds it,
 * taken out of that table; undefined when none holds it (or it starts fresh).
 */
export function kinState(
  table: KeyTable,
  first: number,
  second: number,
  now: number,
): number[] | undefined {
  const kin = table.kin!
  for (const other of kin.tables) {
    if (other === table || other.find(first, second) < 0) continue
    const state = heldState(other, first, second, now)
    return state === undefined
      ? undefined
      : kin.carry(other.algorithm, state, 0, table.algorithm, now)
  }
  return undefined
}

/** The table of `tables` that holds the key, whose slot is then `found.slot`; nothing is moved. */
export function tableHolding(
  tables: readonly KeyTable[],
  first: number,
  second: number,
  found: { slot: number },
): KeyTable | undefined {
  for (const table of tables) {
    const slot = table.find(first, second)
    if (slot >= 0) {
      found.slot = slot
      return table
    }
  }
  return undefined
}
