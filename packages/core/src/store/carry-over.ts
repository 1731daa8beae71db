import type { StateSlots } from '../algorithms/types.js'
import type { KeyTable } from './key-table.js'
import { NO_LOG } from './log-arena.js'

/*
 * Rules changed while running (`limiter.update`), in the memory store: a changed rule gets a
 * table of its own that inherits from the table of its previous figures, lazily. A key missing
 * from the new table is looked up in the old one when it is first inserted; its state there is
 * carried (the rule's `onChange`) and removed from the old table, so no key is rewritten at
 * update time and none is carried twice. An old table left empty is retired.
 */

/** A table's link to the table of its rule's previous figures. */
export type Inheritance = {
  readonly from: KeyTable
  /** The state under `from` (plain numbers at `offset`) as the new table's algorithm holds it. */
  readonly carry: (slots: StateSlots, offset: number, now: number) => number[] | undefined
  /** Retires `from` once it holds no key and inherits from nothing. */
  readonly retire: (from: KeyTable) => void
}

/**
 * The state the key (first, second) carries into `table` from the tables it inherits from, or
 * undefined when none holds it (or it starts fresh). The key is removed where it was found.
 */
export function inheritedState(
  table: KeyTable,
  first: number,
  second: number,
  now: number,
): number[] | undefined {
  const link = table.inherit!
  const from = link.from
  const state = heldState(from, first, second, now)
  if (from.count === 0 && from.inherit === undefined) {
    table.inherit = undefined
    link.retire(from)
  }
  return state === undefined ? undefined : link.carry(state, 0, now)
}

/** Whether `table`'s predecessors hold the key: a look that changes nothing. */
export function inheritsKey(table: KeyTable, first: number, second: number): boolean {
  for (let link = table.inherit; link !== undefined; link = link.from.inherit) {
    if (link.from.find(first, second) >= 0) return true
  }
  return false
}

/** The key's state in `table` (taken out of it), else as carried from its predecessors. */
export function heldState(
  table: KeyTable,
  first: number,
  second: number,
  now: number,
): number[] | undefined {
  const slot = table.find(first, second)
  if (slot < 0) {
    return table.inherit === undefined ? undefined : inheritedState(table, first, second, now)
  }
  const offset = table.offsetAt(slot)
  const size = table.algorithm.stateSize
  let state: number[] | undefined
  if (table.packed !== undefined) {
    state = new Array<number>(size)
    table.packed.unpack(table.words, offset * 2, state, 0)
  } else if (table.logs === undefined) {
    state = Array.from(table.data.subarray(offset, offset + size))
  } else {
    const log = table.data[offset]!
    if (log !== NO_LOG) {
      const data = table.logs.data
      const header = table.algorithm.entries!.header
      state = Array.from(data.subarray(log, log + header + data[log + 2]!))
    }
  }
  table.remove(slot)
  return state
}

/**
 * Writes a carried state into the slot just inserted at `offset`. A log is given a block of the
 * room it needs when the arena has one free or the budget grants one; otherwise it starts empty
 * (nothing is evicted here: the caller holds the offset).
 */
export function writeCarried(
  table: KeyTable,
  offset: number,
  state: number[],
  first: number,
  second: number,
  now: number,
): void {
  if (table.packed !== undefined) {
    table.packed.pack(state, 0, table.words, offset * 2)
    return
  }
  const logs = table.logs
  if (logs === undefined) {
    table.data.set(state, offset)
    return
  }
  const entries = table.algorithm.entries!
  const room = logs.roomFor(state[1]!)
  let block = logs.take(room, first, second)
  if (block === NO_LOG) {
    const grown = logs.data.length + logs.blockSize(room) + (logs.data.length >> 1)
    if (!table.budget.grant(table, (grown - logs.data.length) * 8, now)) return
    logs.resize(grown)
    block = logs.take(room, first, second)
  }
  entries.move(state, 0, logs.data, block, room)
  table.data[offset] = block
}

/** Drops the key from every table `table` inherits from: it starts fresh (an operator's reset). */
export function forgetInherited(table: KeyTable, first: number, second: number): void {
  for (let link = table.inherit; link !== undefined; link = link.from.inherit) {
    const slot = link.from.find(first, second)
    if (slot >= 0) link.from.remove(slot)
  }
}

/** Carries the key into `table` now if a table it inherits from holds it (a read follows). */
export function carryKey(table: KeyTable, first: number, second: number, now: number): void {
  if (table.find(first, second) < 0 && inheritsKey(table, first, second)) {
    table.locate(first, second, now)
  }
}
