import type { Algorithm, PackedState } from '../algorithms/types.js'
import type { BudgetHolder, ByteBudget } from './byte-budget.js'
import { type Inheritance, inheritedState, writeCarried } from './carry-over.js'
import { type Kin, kinState } from './figure-tables.js'
import type { KeyHasher } from './fingerprint.js'
import { LogArena, NO_LOG } from './log-arena.js'
import { handStep, rehashed, shiftBack } from './open-addressing.js'
import { packedForm } from './packed-forms.js'

/*
 * One rule's keys, packed for millions of entries: a single open-addressing table (linear
 * probing, load ≤ 3/4) whose slots hold the entries themselves, so finding a key's state is one
 * random memory access, not two.
 *
 * A slot is `stride` = 1 + algorithm.stateSize doubles in `data`. Word 0, read as two uint32
 * through `words` (a view of the same buffer), holds the key's fingerprint: first half + 1 (so 0
 * marks an empty slot), then the second half, whose spare top bit is the CLOCK reference bit.
 * The state follows. An algorithm with a `packed` form (the token and leaky buckets and the fixed
 * window, for every rule whose counts fit in 21 bits) keeps its state in the two uint32 words of
 * one double instead, read and written by that form (packed-forms.ts, built once per table): its slot is 16 bytes, as GCRA's, where
 * two doubles of state take 24. An
 * algorithm whose state is a log of entries keeps only the place of the key's log in `logs`
 * there (NO_LOG while it holds none), so a key costs what its log holds (see log-arena.ts).
 *
 * Every array a table allocates is granted by the store's `ByteBudget` first; a table the
 * budget refuses evicts its own keys instead of growing, and gives bytes back when asked.
 *
 * The table size need not be a power of two (the home slot is ⌊first × slots / 2^31⌋), so it
 * grows by a quarter once large: 2.04 M token-bucket keys take 2.9 M slots (≈ 23 B per key in
 * 16-byte slots), not the 4.2 M a doubling table could land on. Between two growths the table is
 * 60 to 75 % full: 21–27 B per key for a 16-byte slot. It shrinks only when the budget asks.
 *
 * A class rather than a factory of closures: every table then shares one hidden class and the
 * hot path's property loads stay monomorphic.
 */
const REFERENCED = 0x80000000
const SECOND_BITS = 0x7fffffff
const TWO_POW_31 = 2147483648
/** Entries from the hand checked for a fresh one before anything is evicted. */
const FRESH_LOOKAHEAD = 8
/**
 * Keys holding slots the hand passes before a table that keeps them grows instead: bounds the
 * cost of a reclaim that cannot succeed, and grows the table only once nearly every key (about
 * 19 in 20, for even odds) holds slots.
 */
const HELD_LOOKAHEAD = 64
/** Below this many slots a table doubles; above, it grows by a quarter. */
const DOUBLING_LIMIT = 65_536

export class KeyTable implements BudgetHolder {
  algorithm: Algorithm
  readonly stride: number
  readonly maxKeys: number
  readonly budget: ByteBudget
  /** The entry logs of the keys, for an algorithm with `entries`. */
  readonly logs: LogArena | undefined
  /**
   * The algorithm's 8-byte form when it has one: states are then two words of `words` at twice
   * the state's offset in `data`, read and written only through it.
   */
  readonly packed: PackedState | undefined
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
  /** A key that must not be evicted while its log is given room (first half + 1, or 0). */
  pinTag = 0
  pinSecond = 0
  /**
   * The algorithm's states hold units until they are given back (concurrency): a key that is not
   * fresh is never evicted, since dropping it would hand its slots out again.
   */
  readonly keepsHeld: boolean
  /** Set on the table of a rule changed while running: where its keys' states come from. */
  inherit: Inheritance | undefined = undefined
  /** Set on the tables of a rule with per-client figures: its other tables, and how keys carry. */
  kin: Kin | undefined = undefined

  constructor(algorithm: Algorithm, maxKeys: number, budget: ByteBudget, now: number) {
    this.algorithm = algorithm
    const log = algorithm.entries
    this.packed = log === undefined ? packedForm(algorithm) : undefined
    this.stride = log === undefined && this.packed === undefined ? 1 + algorithm.stateSize : 2
    this.maxKeys = maxKeys
    this.budget = budget
    this.keepsHeld = algorithm.heldUntilReleased === true
    this.slots = 16
    this.scale = this.slots / TWO_POW_31
    this.step = handStep(this.slots)
    this.logs = log === undefined ? undefined : new LogArena(log, algorithm.limit, 0)
    const bytes = this.slots * this.stride * 8
    if (!budget.grant(this, bytes, now, true)) budget.used += bytes
    budget.holders.add(this)
    this.data = new Float64Array(this.slots * this.stride)
    this.words = new Uint32Array(this.data.buffer)
  }

  /** The bytes of its arrays, as the budget counts them. */
  get bytes(): number {
    return this.data.byteLength + (this.logs === undefined ? 0 : this.logs.bytes)
  }

  /** Gives every byte back: the table is no longer used. */
  retire(): void {
    this.budget.release(this.bytes)
    this.budget.holders.delete(this)
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
    const first = hasher.first
    const second = hasher.second
    // As `find` and `touch`, written out: this runs on every request.
    const words = this.words
    const stride2 = this.stride * 2
    const tag = first + 1
    let slot = Math.floor(first * this.scale)
    for (;;) {
      const at = slot * stride2
      const head = words[at]!
      // A key just inserted is not remembered: its next use is found by hash and marks it as
      // used, so that a client's burst is not evicted as if it were a one-off key.
      if (head === 0) return this.insert(first, second, now) * this.stride + 1
      if (head === tag) {
        const marked = words[at + 1]!
        if ((marked & SECOND_BITS) === second) {
          if (marked < REFERENCED) words[at + 1] = marked + REFERENCED
          const offset = slot * this.stride + 1
          this.lastKey = key
          this.lastOffset = offset
          return offset
        }
      }
      slot = slot + 1 === this.slots ? 0 : slot + 1
    }
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
    return this.freshAt(slot) <= now
  }

  /** When the entry in `slot` is back to full capacity (0 for a log that holds nothing). */
  freshAt(slot: number): number {
    const offset = slot * this.stride + 1
    if (this.packed !== undefined) return this.packed.freshAt(this.words, offset * 2)
    if (this.logs === undefined) return this.algorithm.freshAt(this.data, offset)
    const log = this.data[offset]!
    return log === NO_LOG ? 0 : this.algorithm.freshAt(this.logs.data, log)
  }

  /**
   * Drops every entry that is back to full capacity at `now` and returns how many: nothing is
   * lost, as when the CLOCK hand takes a fresh entry. The table keeps its size.
   */
  sweep(now: number): number {
    const words = this.words
    const stride2 = this.stride * 2
    // Fingerprints first, removed after: a removal shifts later entries back over the slots.
    const fresh: number[] = []
    for (let slot = 0; slot < this.slots; slot++) {
      const at = slot * stride2
      if (words[at] !== 0 && this.isFresh(slot, now)) {
        fresh.push(words[at]! - 1, words[at + 1]! & SECOND_BITS)
      }
    }
    for (let i = 0; i < fresh.length; i += 2) this.remove(this.find(fresh[i]!, fresh[i + 1]!))
    return fresh.length / 2
  }

  /** Adds an unreferenced entry at full capacity: a flood of one-off keys goes first. */
  private insert(first: number, second: number, now: number): number {
    // Room is made only when the table is full or at its bound: most inserts need none.
    if (this.count >= this.maxKeys || (this.count + 1) * 4 > this.slots * 3) this.makeRoom(now)
    const words = this.words
    const stride2 = this.stride * 2
    let slot = Math.floor(first * this.scale)
    while (words[slot * stride2] !== 0) slot = slot + 1 === this.slots ? 0 : slot + 1
    words[slot * stride2] = first + 1
    words[slot * stride2 + 1] = second
    if (this.packed !== undefined) this.packed.init(words, (slot * this.stride + 1) * 2, now)
    else if (this.logs === undefined) this.algorithm.init(this.data, slot * this.stride + 1, now)
    else this.data[slot * this.stride + 1] = NO_LOG
    this.count++
    // A changed rule's key seen for the first time since: its state under the old figures; or a
    // key whose own figures changed: its state under them.
    if (this.inherit !== undefined || this.kin !== undefined) this.adopt(slot, first, second, now)
    return slot
  }

  /** Carries the key's state from the tables this one inherits from, if one holds it. */
  private adopt(slot: number, first: number, second: number, now: number): void {
    let state = this.inherit === undefined ? undefined : inheritedState(this, first, second, now)
    if (state === undefined && this.kin !== undefined) state = kinState(this, first, second, now)
    if (state !== undefined) writeCarried(this, slot * this.stride + 1, state, first, second, now)
  }

  /**
   * Lazy reclaim: keys are dropped only when the table is full; sweeping earlier would free no
   * memory (the table keeps its size) and would turn a returning key's hit into an insert.
   */
  private makeRoom(now: number): void {
    const full = (this.count + 1) * 4 > this.slots * 3
    if (this.count < this.maxKeys && (!full || this.grow(now))) return
    if (this.reclaim(now) || !full) return
    // Every key holds slots. They are as many as the requests in flight, each of which costs its
    // server far more than an entry, so the table outgrows its bound rather than hand a slot
    // out twice.
    const slots = this.slots < DOUBLING_LIMIT ? this.slots * 2 : this.slots + (this.slots >> 2)
    const bytes = (slots - this.slots) * this.stride * 8
    if (!this.budget.grant(this, bytes, now, true)) this.budget.used += bytes
    this.rehash(slots)
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
   *
   * With `keepsHeld` only a fresh entry may go: false when the next HELD_LOOKAHEAD entries (or a
   * whole turn) hold none.
   */
  reclaim(now: number): boolean {
    const words = this.words
    const stride2 = this.stride * 2
    const slots = this.slots
    const step = this.step
    const keepsHeld = this.keepsHeld
    let victim = -1
    let looked = 0
    let visited = 0
    let slot = this.hand
    for (;;) {
      const at = slot * stride2
      const pinned = words[at] === this.pinTag && (words[at + 1]! & SECOND_BITS) === this.pinSecond
      if (words[at] !== 0 && !pinned) {
        if (this.isFresh(slot, now)) break
        if (keepsHeld) {
          // Held: passed over, whatever its reference bit.
          if (++looked === HELD_LOOKAHEAD) {
            this.hand = slot
            return false
          }
        } else if (victim >= 0) {
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
      if (keepsHeld && ++visited === slots) {
        this.hand = slot
        return false
      }
    }
    this.hand = slot
    this.remove(slot)
    return true
  }

  /** Empties `slot`, shifting back the entries after it that would otherwise become unreachable. */
  remove(slot: number): void {
    const words = this.words
    const stride2 = this.stride * 2
    const slots = this.slots
    if (this.logs !== undefined && this.data[slot * this.stride + 1] !== NO_LOG) {
      this.logs.release(this.data[slot * this.stride + 1]!)
    }
    const hole = shiftBack(words, this.stride, slots, this.scale, slot)
    words[hole * stride2] = 0
    this.count--
    this.lastKey = undefined
  }

  /** Moves to a larger table, if the budget grants it. */
  private grow(now: number): boolean {
    const oldSlots = this.slots
    const largest = Math.ceil((this.maxKeys * 4) / 3) + 1
    const grown = oldSlots < DOUBLING_LIMIT ? oldSlots * 2 : oldSlots + (oldSlots >> 2)
    let slots = Math.max(oldSlots + 1, Math.min(grown, largest))
    const slotBytes = this.stride * 8
    if (!this.budget.grant(this, (slots - oldSlots) * slotBytes, now)) {
      // Near the bound: what is left, if that is worth a move (an eighth more at least).
      const spare = Math.floor((this.budget.max - this.budget.used) / slotBytes)
      if (spare < oldSlots >> 3 || !this.budget.grant(this, spare * slotBytes, now)) return false
      slots = oldSlots + spare
    }
    this.rehash(slots)
    return true
  }

  shrinkTo(bytes: number, now: number): void {
    const logs = this.logs
    if (logs !== undefined) {
      // The logs first: they are most of a log table's bytes.
      const room = Math.max(0, Math.floor((bytes - this.data.byteLength) / 8))
      while (logs.top - logs.free > room && this.count > 0) if (!this.reclaim(now)) break
      logs.compact((first, second, state) => {
        this.data[this.find(first, second) * this.stride + 1] = state
      })
      const length = Math.max(logs.top, Math.min(room, logs.data.length))
      this.budget.release(logs.bytes - length * 8)
      logs.resize(length)
    }
    const slotBytes = this.stride * 8
    let slots = Math.max(16, Math.floor((bytes - (logs?.bytes ?? 0)) / slotBytes))
    if (slots >= this.slots) return
    while (this.count * 4 > slots * 3) {
      // What is left holds slots: the table keeps room for it.
      if (!this.reclaim(now)) slots = Math.ceil((this.count * 4) / 3)
    }
    if (slots >= this.slots) return
    this.budget.release((this.slots - slots) * slotBytes)
    this.rehash(slots)
  }

  /** Re-inserts every entry into a table of `slots` slots. */
  private rehash(slots: number): void {
    this.data = rehashed(this.words, this.slots, this.stride, slots)
    this.words = new Uint32Array(this.data.buffer)
    this.slots = slots
    this.scale = slots / TWO_POW_31
    this.step = handStep(slots)
    this.hand = 0
    this.lastKey = undefined
  }
}
