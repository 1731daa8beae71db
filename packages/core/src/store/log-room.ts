import type { KeyTable } from './key-table.js'
import { type LogArena, NO_LOG } from './log-arena.js'

const SECOND_BITS = 0x7fffffff

/**
 * The place in `table.logs.data` of the log of the key whose state word is at `offset`, with
 * room for `needed` entries: the log as it is when it has the room, else moved to a larger
 * block (or a smaller one, once it holds a quarter of its room or less). Making room may grow
 * the arena within the budget, compact it, or evict other keys of the table, never this one.
 * Without `keep`, the caller writes the whole log itself, so what the old block held is not
 * copied. NO_LOG when the key holds no log and needs none, or when the table cannot hold a log that
 * large at all (a budget smaller than one log): the key's log is then dropped.
 */
export function logWithRoom(
  table: KeyTable,
  offset: number,
  needed: number,
  now: number,
  keep = true,
): number {
  const logs = table.logs!
  const current = table.data[offset]!
  const room = current === NO_LOG ? 0 : logs.roomAt(current)
  const wanted = logs.roomFor(needed)
  if (room >= needed && (wanted >= room || room <= 4 * wanted)) return current
  const at = (offset - 1) * 2
  const tag = table.words[at]!
  const second = table.words[at + 1]! & SECOND_BITS
  table.pinTag = tag
  table.pinSecond = second
  const block = takeBlock(table, logs, wanted, tag - 1, second, now)
  table.pinTag = 0
  table.pinSecond = 0
  // Evictions may have moved the key's slot, and compaction its log.
  const state = table.find(tag - 1, second) * table.stride + 1
  const old = table.data[state]!
  if (block === NO_LOG) {
    // Kept as if evicted: the request is decided on a fresh log that is then dropped.
    if (old !== NO_LOG) logs.release(old)
    table.data[state] = NO_LOG
    return NO_LOG
  }
  if (old !== NO_LOG) {
    if (keep) table.algorithm.entries!.move(logs.data, old, logs.data, block, wanted)
    logs.release(old)
  }
  table.data[state] = block
  return block
}

/** A block of `room` for the key (first, second), making space for it as needed. */
function takeBlock(
  table: KeyTable,
  logs: LogArena,
  room: number,
  first: number,
  second: number,
  now: number,
): number {
  const size = logs.blockSize(room)
  const relink = (f: number, s: number, state: number) => {
    table.data[table.find(f, s) * table.stride + 1] = state
  }
  for (;;) {
    const block = logs.take(room, first, second)
    if (block !== NO_LOG) return block
    // Compacting pays for itself once a quarter of the arena is free.
    const last = table.count <= 1
    if (logs.free >= size && (logs.free * 4 >= logs.data.length || last)) {
      logs.compact(relink)
      continue
    }
    const length = logs.data.length
    const grown = Math.max(logs.top + size, length + (length >> 1), 64)
    if (table.budget.grant(table, (grown - length) * 8, now)) {
      logs.resize(grown)
      continue
    }
    // Near the bound: all that is left, once, rather than a move for every few entries.
    const spare = Math.floor((table.budget.max - table.budget.used) / 8)
    if (logs.top + size <= length + spare && table.budget.grant(table, spare * 8, now)) {
      logs.resize(length + spare)
      continue
    }
    if (last || !table.reclaim(now)) return NO_LOG
  }
}
