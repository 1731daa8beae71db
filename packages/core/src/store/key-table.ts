import { greatestCommonDivisor } from '../algorithms/integer.js'
import type { Algorithm } from '../algorithms/types.js'
import type { KeyHasher } from './fingerprint.js'

/*
 * One rule's keys, packed for millions of entries: a single open-addressing table (linear
 * probing, load ≤ 3/4) whose slots hold the entries themselves, so finding a key's state is one
 * random memory access, not two.
 *
 * A slot is `stride` = 1 + algorithm.stateSize doubles in `data`. Word 0, read as two uint32
 * through `words` (a view of the same buffer), holds the key's fingerprint: first half + 1 (so 0
 * marks an empty slot), then the second half, whose spare top bit is the CLOCK reference bit.
 * The state follows. A token-bucket slot is 24 bytes, a GCRA slot 16.
 *
 * The table size need not be a power of two (the home slot is ⌊first × slots / 2^31⌋), so it
 * grows by a quarter once large: 2.04 M token-bucket keys take 2.9 M slots (≈ 34 B per key),
 * not the 4.2 M a doubling table could land on. Deletion shifts the following run back
 * (no tombstones). The table never shrinks.
 *
 * A class rather than a factory of closures: every table then shares one hidden class and the
 * hot path's property loads stay monomorphic.
 */
const REFERENCED = 0x80000000
const SECOND_BITS = 0x7fffffff
const TWO_POW_31 = 2147483648
/** Keys per rule table at most (2^24 − 1). */
export const MAX_TABLE_KEYS = 16_777_215
/** Entries from the hand checked for a fresh one before anything is evicted. */
const FRESH_LOOKAHEAD = 8
/** Below this many slots a table doubles; above, it grows by a quarter. */
const DOUBLING_LIMIT = 65_536

export class KeyTable {
  algorithm: Algorithm
  readonly stride: number
  readonly maxKeys: number
  data: Float64Array
  words: Uint32Array
  slots: number
  /** slots / 2^31: maps the first fingerprint half onto a home slot. */
  scale: number
  count = 0
  evictions = 0
  /** The CLOCK hand: the next slot to consider when the table is full. */
  hand = 0
  /** How far the hand moves per slot considered (see `handStep`). */
  step: number
  /**
   * The key last located by its string, and the offset of its state: a client sending a burst
   * is found again without hashing. Cleared whenever entries move and by every other lookup, so
   * the entry's reference bit, set when it was located, is still set.
   */
  lastKey: string | undefined = undefined
  lastOffset = 0

  constructor(algorithm: Algorithm, maxKeys: number) {
    this.algorithm = algorithm
    this.stride = 1 + algorithm.stateSize
    this.maxKeys = maxKeys
    // Small at first, and tiny for large states (a sliding log keeps one number per unit).
    this.slots = Math.max(4, Math.min(16, Math.floor(65_536 / (8 * this.stride))))
    this.scale = this.slots / TWO_POW_31
    this.step = handStep(this.slots)
    this.data = new Float64Array(this.slots * this.stride)
    this.words = new Uint32Array(this.data.buffer)
  }

  /** The slot holding fingerprint (first, second), or -1. */
  find(first: number, second: number): number {
    const words = this.words
    const stride2 = this.stride * 2
    const slots = this.slots
    const tag = first + 1
    let slot = Math.floor(first * this.scale)
    for (;;) {
      const at = slot * stride2
      const head = words[at]!
      if (head === 0) return -1
      if (head === tag && (words[at + 1]! & SECOND_BITS) === second) return slot
      slot = slot + 1 === slots ? 0 : slot + 1
    }
  }

  /**
   * The offset in `data` of `key`'s state, created at `now` if absent (which may reclaim or
   * evict another entry and reallocate `data`). Marks the entry as recently used.
   */
  locateKey(key: string, hasher: KeyHasher, now: number): number {
    if (key === this.lastKey) return this.lastOffset
    hasher.hash(key)
    this.lastKey = undefined
    const slot = this.find(hasher.first, hasher.second)
    // A key just inserted is not remembered: its next use is found by hash and marks it as
    // used, so that a client's burst is not evicted as if it were a one-off key.
    if (slot < 0) return this.insert(hasher.first, hasher.second, now) * this.stride + 1
    const offset = this.touch(slot)
    this.lastKey = key
    this.lastOffset = offset
    return offset
  }

  /** As `locateKey`, by fingerprint. */
  locate(first: number, second: number, now: number): number {
    this.lastKey = undefined
    const slot = this.find(first, second)
    return slot < 0 ? this.insert(first, second, now) * this.stride + 1 : this.touch(slot)
  }

  /** Marks the entry in `slot` as recently used and returns the offset of its state. */
  touch(slot: number): number {
    const at = slot * this.stride * 2 + 1
    const second = this.words[at]!
    if (second < REFERENCED) this.words[at] = second + REFERENCED
    return slot * this.stride + 1
  }

  offsetAt(slot: number): number {
    return slot * this.stride + 1
  }

  /** True when the entry in `slot` is back to full capacity: dropping it loses nothing. */
  isFresh(slot: number, now: number): boolean {
    return this.algorithm.freshAt(this.data, slot * this.stride + 1) <= now
  }

  /** Adds an unreferenced entry at full capacity: a flood of one-off keys goes first. */
  private insert(first: number, second: number, now: number): number {
    // Lazy reclaim: keys are dropped only when the table is full; sweeping earlier would free no
    // memory (the table keeps its size) and would turn a returning key's hit into an insert.
    if (this.count >= this.maxKeys) this.reclaim(now)
    else if ((this.count + 1) * 4 > this.slots * 3) this.grow()
    const words = this.words
    const stride2 = this.stride * 2
    let slot = Math.floor(first * this.scale)
    while (words[slot * stride2] !== 0) slot = slot + 1 === this.slots ? 0 : slot + 1
    words[slot * stride2] = first + 1
    words[slot * stride2 + 1] = second
    this.algorithm.init(this.data, slot * this.stride + 1, now)
    this.count++
    return slot
  }

  /**
   * Frees one entry with the CLOCK (second chance) hand. A fresh entry the hand reaches is
   * taken at once: dropping it loses nothing. A referenced entry loses its bit and is passed
   * over. The first unreferenced one becomes the victim, unless one of the next
   * `FRESH_LOOKAHEAD` entries is fresh, which is then taken instead. Ends within two turns,
   * since the first turn clears every bit.
   *
   * The hand visits every slot once per turn, but in a scattered order (`step` apart) rather
   * than one after the next: stepping by one, it would empty the slots just behind it while new
   * keys land everywhere, packing the rest of the table into runs so long that every probe
   * walks them (a flood of new clients would cost milliseconds each).
   */
  private reclaim(now: number): void {
    const words = this.words
    const stride2 = this.stride * 2
    const slots = this.slots
    const step = this.step
    let victim = -1
    let looked = 0
    let slot = this.hand
    for (;;) {
      const at = slot * stride2
      if (words[at] !== 0) {
        if (this.isFresh(slot, now)) break
        if (victim >= 0) {
          if (++looked === FRESH_LOOKAHEAD) {
            slot = victim
            this.evictions++
            break
          }
        } else if (words[at + 1]! >= REFERENCED) {
          words[at + 1] = words[at + 1]! - REFERENCED
        } else {
          victim = slot
        }
      }
      slot += step
      if (slot >= slots) slot -= slots
    }
    this.hand = slot
    this.remove(slot)
  }

  /** Empties `slot`, shifting back the entries after it that would otherwise become unreachable. */
  remove(slot: number): void {
    const words = this.words
    const stride2 = this.stride * 2
    const slots = this.slots
    let hole = slot
    let next = slot
    for (;;) {
      next = next + 1 === slots ? 0 : next + 1
      const head = words[next * stride2]!
      if (head === 0) break
      const home = Math.floor((head - 1) * this.scale)
      // It may fill the hole unless its home lies cyclically after the hole, up to `next`.
      const fromHome = next >= home ? next - home : next + slots - home
      const fromHole = next >= hole ? next - hole : next + slots - hole
      if (fromHome >= fromHole) {
        words.copyWithin(hole * stride2, next * stride2, (next + 1) * stride2)
        hole = next
      }
    }
    words[hole * stride2] = 0
    this.count--
    this.lastKey = undefined
  }

  /** Re-inserts every entry into a larger table. */
  private grow(): void {
    const stride2 = this.stride * 2
    const old = this.words
    const oldSlots = this.slots
    const largest = Math.ceil((this.maxKeys * 4) / 3) + 1
    const grown = oldSlots < DOUBLING_LIMIT ? oldSlots * 2 : oldSlots + (oldSlots >> 2)
    const slots = Math.max(oldSlots + 1, Math.min(grown, largest))
    const data = new Float64Array(slots * this.stride)
    const words = new Uint32Array(data.buffer)
    const scale = slots / TWO_POW_31
    for (let from = 0; from < oldSlots; from++) {
      const head = old[from * stride2]!
      if (head === 0) continue
      let slot = Math.floor((head - 1) * scale)
      while (words[slot * stride2] !== 0) slot = slot + 1 === slots ? 0 : slot + 1
      words.set(old.subarray(from * stride2, (from + 1) * stride2), slot * stride2)
    }
    this.data = data
    this.words = words
    this.slots = slots
    this.scale = scale
    this.step = handStep(slots)
    this.hand = 0
    this.lastKey = undefined
  }
}

/**
 * A step that takes the CLOCK hand through all `slots` once per turn (it shares no factor with
 * `slots`), each visit far from the last: about 0.618 of the table, the golden ratio's spread.
 */
function handStep(slots: number): number {
  if (slots <= 2) return 1
  let step = Math.floor(slots * 0.6180339887) | 1
  while (greatestCommonDivisor(step, slots) !== 1) step += 2
  return step
}
