import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import { applyCharges } from './apply-charges.js'
import { carryKey } from './carry-over.js'
import type { KeyHasher } from './fingerprint.js'
import type { KeyTable } from './key-table.js'
import { NO_LOG } from './log-arena.js'
import { logWithRoom } from './log-room.js'
import type { Charge } from './types.js'

/** The memory store's working space for one request's states, grown as needed and kept. */
export type Scratch = { buffer: Float64Array }

/**
 * Decides a request of several charges as one unit: every state is copied into `scratch`
 * (a log with room for what it holds plus what is charged), decided there by `applyCharges`,
 * and written back, so a denied request writes nothing. `owned[i]` is the table of `charges[i]`.
 */
export function consumeMany(
  charges: readonly Charge[],
  owned: readonly KeyTable[],
  hasher: KeyHasher,
  scratch: Scratch,
  now: number,
): Decision[] {
  const count = charges.length
  const firsts: number[] = []
  const seconds: number[] = []
  const owners: number[] = []
  const offsets: number[] = []
  /** Per owner: the room its state takes here (a log's: what it holds plus what is charged). */
  const sizes: number[] = []
  /** Per owner: the cost charged to its state by the request, all of its charges together. */
  const charged: number[] = []
  for (let i = 0; i < count; i++) {
    hasher.hash(charges[i]!.key)
    firsts.push(hasher.first)
    seconds.push(hasher.second)
    // A changed rule's key is carried into its new table before its state is read.
    if (owned[i]!.inherit !== undefined) carryKey(owned[i]!, hasher.first, hasher.second, now)
    // The same key under the same rule twice in one request shares one state, as it would in
    // a store that keeps the strings.
    let owner = i
    for (let j = 0; j < i && owner === i; j++) {
      if (owned[j] === owned[i] && firsts[j] === hasher.first && seconds[j] === hasher.second) {
        owner = j
      }
    }
    owners.push(owner)
    const { algorithm, cost } = charges[i]!
    const table = owned[i]!
    charged[i] = 0
    charged[owner] = charged[owner]! + cost
    if (owner !== i) {
      if (table.logs !== undefined) sizes[owner] = Math.min(sizes[owner]! + cost, algorithm.limit)
      sizes.push(0)
    } else if (table.logs === undefined) {
      sizes.push(algorithm.stateSize)
    } else {
      const slot = table.find(hasher.first, hasher.second)
      const log = slot < 0 ? NO_LOG : table.data[table.offsetAt(slot)]!
      const held = log === NO_LOG ? 0 : algorithm.entries!.held(table.logs.data, log)
      sizes.push(Math.min(held + cost, algorithm.limit))
    }
  }
  let size = 0
  for (let i = 0; i < count; i++) {
    const owner = owners[i]!
    if (owner !== i) {
      offsets.push(offsets[owner]!)
      continue
    }
    offsets.push(size)
    size +=
      owned[i]!.logs === undefined ? sizes[i]! : charges[i]!.algorithm.entries!.header + sizes[i]!
  }
  if (scratch.buffer.length < size) scratch.buffer = new Float64Array(size * 2)
  const buffer = scratch.buffer
  for (let i = 0; i < count; i++) {
    if (owners[i] !== i) continue
    const table = owned[i]!
    const { algorithm } = charges[i]!
    const slot = table.find(firsts[i]!, seconds[i]!)
    const at = offsets[i]!
    const logs = table.logs
    const from = slot < 0 ? -1 : table.offsetAt(slot)
    if (logs !== undefined) {
      const log = from < 0 ? NO_LOG : table.data[from]!
      if (log === NO_LOG) {
        algorithm.init(buffer, at, now)
        buffer[at + 2] = sizes[i]!
      } else {
        algorithm.entries!.move(logs.data, log, buffer, at, sizes[i]!)
      }
    } else if (from < 0) algorithm.init(buffer, at, now)
    else if (table.packed !== undefined) table.packed.unpack(table.words, from * 2, buffer, at)
    else buffer.set(table.data.subarray(from, from + table.stride - 1), at)
  }
  const decisions = applyCharges(charges, new Array(count).fill(buffer), offsets, now)
  for (let i = 0; i < count; i++) {
    // A state only inspected (cost 0) is as it was read: an inspection writes nothing, and a
    // key it inserted could evict one that holds a count.
    if (owners[i] !== i || charged[i] === 0) continue
    const table = owned[i]!
    const to = table.locate(firsts[i]!, seconds[i]!, now)
    const at = offsets[i]!
    const entries = charges[i]!.algorithm.entries
    if (table.packed !== undefined) {
      table.packed.pack(buffer, at, table.words, to * 2)
      continue
    }
    if (table.logs === undefined || entries === undefined) {
      table.data.set(buffer.subarray(at, at + table.stride - 1), to)
      continue
    }
    const log = logWithRoom(table, to, entries.held(buffer, at), now, false)
    if (log !== NO_LOG) entries.move(buffer, at, table.logs.data, log, table.logs.roomAt(log))
  }
  return decisions
}

/** A decision on a rule whose keys keep logs: the key's log first gets room for the cost. */
export function decideLogged(
  table: KeyTable,
  algorithm: Algorithm,
  offset: number,
  cost: number,
  now: number,
): Decision {
  const logs = table.logs!
  const current = table.data[offset]!
  const held = current === NO_LOG ? 0 : algorithm.entries!.held(logs.data, current)
  const log = logWithRoom(table, offset, Math.min(held + cost, algorithm.limit), now)
  if (log !== NO_LOG) return algorithm.decide(logs.data, log, cost, now, true)
  // Nothing held and nothing charged, or a log the budget cannot hold: an empty log decides.
  const fresh = new Array<number>(algorithm.stateSize)
  algorithm.init(fresh, 0, now)
  return algorithm.decide(fresh, 0, cost, now, true)
}
