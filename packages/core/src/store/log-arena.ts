import type { EntryLog } from '../algorithms/types.js'

/*
 * The entry logs (sliding logs) of one rule's keys, each in a block sized by what it holds, not
 * by the rule's limit: a log of 3 entries takes a block with room for 4, whatever its limit.
 *
 * A block is [fingerprint (two uint32 in one double, as in the key table), the log's header,
 * its ring]. Rooms are powers of two from 2 up to the limit (the last one the limit itself), so
 * a log grows by moving to the next room, at most log2(limit) times. A freed block goes on its
 * room's free list and is taken again by the next log of that room; when a quarter of the arena
 * is free, the live blocks slide down over the free ones (compaction), and each block's key is
 * found again by the fingerprint it carries.
 */
export const NO_LOG = -1
const MIN_ROOM = 2

export class LogArena {
  data: Float64Array
  words: Uint32Array
  /** Where the next block at the end goes. */
  top = 0
  /** Numbers in freed blocks. */
  free = 0
  readonly freeLists: number[][] = []
  readonly header: number

  constructor(
    readonly log: EntryLog,
    readonly limit: number,
    length: number,
  ) {
    this.header = log.header
    this.data = new Float64Array(length)
    this.words = new Uint32Array(this.data.buffer)
  }

  get bytes(): number {
    return this.data.byteLength
  }

  /** The room a log of `needed` entries is kept in. */
  roomFor(needed: number): number {
    let room = MIN_ROOM
    while (room < needed) room *= 2
    return Math.min(room, this.limit)
  }

  /** The room of the log whose state starts at `state`. */
  roomAt(state: number): number {
    return this.data[state + 2]!
  }

  blockSize(room: number): number {
    return 1 + this.header + room
  }

  /**
   * A block with room for `room` entries, holding an empty log, for the key with fingerprint
   * (first, second): its state's offset, or NO_LOG when the arena has no space for it.
   */
  take(room: number, first: number, second: number): number {
    const list = this.freeLists[listIndex(room)]
    let block: number
    if (list !== undefined && list.length > 0) {
      block = list.pop()!
      this.free -= this.blockSize(room)
    } else if (this.top + this.blockSize(room) <= this.data.length) {
      block = this.top
      this.top += this.blockSize(room)
    } else {
      return NO_LOG
    }
    this.words[block * 2] = first + 1
    this.words[block * 2 + 1] = second
    const state = block + 1
    this.data[state] = 0
    this.data[state + 1] = 0
    this.data[state + 2] = room
    return state
  }

  /** Frees the block of the log whose state starts at `state`. */
  release(state: number): void {
    const block = state - 1
    const room = this.roomAt(state)
    this.words[block * 2] = 0
    this.free += this.blockSize(room)
    const index = listIndex(room)
    while (this.freeLists.length <= index) this.freeLists.push([])
    this.freeLists[index]!.push(block)
  }

  /** Slides every live block down over the free ones; `moved` learns each block's new state. */
  compact(moved: (first: number, second: number, state: number) => void): void {
    const data = this.data
    const words = this.words
    let write = 0
    for (let read = 0; read < this.top; ) {
      const size = this.blockSize(data[read + 3]!)
      if (words[read * 2] !== 0) {
        if (write !== read) {
          data.copyWithin(write, read, read + size)
          moved(words[write * 2]! - 1, words[write * 2 + 1]!, write + 1)
        }
        write += size
      }
      read += size
    }
    this.top = write
    this.free = 0
    this.freeLists.length = 0
  }

  /** Moves the blocks into an arena of `length` numbers (at least `top`). */
  resize(length: number): void {
    const data = new Float64Array(length)
    data.set(this.data.subarray(0, this.top))
    this.data = data
    this.words = new Uint32Array(data.buffer)
  }
}

/** The free list of a room: powers of two by their exponent; the limit's own room last. */
function listIndex(room: number): number {
  const exponent = Math.log2(room)
  return Number.isInteger(exponent) ? exponent : 31
}
