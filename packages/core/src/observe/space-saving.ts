/** One key a sketch keeps, with what it knows of it. */
export type HeavyHitter = {
  readonly key: string
  /** Counted occurrences: never below the true count, at most `error` above it. */
  readonly count: number
  /** How much of `count` may belong to keys this one replaced (0: the count is exact). */
  readonly error: number
  /** When the key was first and last counted since it entered the sketch (ms). */
  readonly firstSeen: number
  readonly lastSeen: number
}

type Slot = { key: string; count: number; error: number; firstSeen: number; lastSeen: number }

/**
 * The Space-Saving heavy-hitters sketch (Metwally, Agrawal and El Abbadi, 2005): at most
 * `capacity` keys in fixed memory, whatever the number of distinct keys. A key not kept
 * replaces the one with the lowest count and inherits that count as its error. After `total`
 * additions:
 *
 * - every kept key's true count lies in [count − error, count];
 * - every key that occurred more than total ÷ capacity times is kept;
 * - the lowest kept count, and so any error, is at most total ÷ capacity.
 *
 * Kept in a binary min-heap on count with a map from key to position: an addition is O(log
 * capacity).
 */
export class SpaceSaving {
  private readonly heap: Slot[] = []
  private readonly positions = new Map<string, number>()
  private added = 0

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity: expected a whole number ≥ 1, got ${capacity}`)
    }
  }

  /** How many occurrences were added in all. */
  get total(): number {
    return this.added
  }

  /** The most any count is above the truth: total ÷ capacity, once the sketch is full. */
  get errorBound(): number {
    return this.heap.length < this.capacity ? 0 : this.heap[0]!.count
  }

  /**
   * Counts `times` occurrences of `key` at `at` (ms), replacing the lightest kept key if `key` is
   * not kept and the sketch is full.
   */
  add(key: string, at: number, times = 1): void {
    this.added += times
    const position = this.positions.get(key)
    if (position !== undefined) {
      const slot = this.heap[position]!
      slot.count += times
      slot.lastSeen = at
      this.down(position)
      return
    }
    if (this.heap.length < this.capacity) {
      this.heap.push({ key, count: times, error: 0, firstSeen: at, lastSeen: at })
      this.positions.set(key, this.heap.length - 1)
      this.up(this.heap.length - 1)
      return
    }
    const least = this.heap[0]!
    this.positions.delete(least.key)
    this.positions.set(key, 0)
    least.error = least.count
    least.count += times
    least.key = key
    least.firstSeen = at
    least.lastSeen = at
    this.down(0)
  }

  /** The kept keys, heaviest first (ties by key). */
  top(limit = this.capacity): HeavyHitter[] {
    return this.heap
      .map((slot) => ({ ...slot }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, limit)
  }

  private up(index: number): void {
    const heap = this.heap
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (heap[parent]!.count <= heap[index]!.count) return
      this.swap(index, parent)
      index = parent
    }
  }

  private down(index: number): void {
    const heap = this.heap
    for (;;) {
      const left = 2 * index + 1
      if (left >= heap.length) return
      const right = left + 1
      const child = right < heap.length && heap[right]!.count < heap[left]!.count ? right : left
      if (heap[index]!.count <= heap[child]!.count) return
      this.swap(index, child)
      index = child
    }
  }

  private swap(a: number, b: number): void {
    const heap = this.heap
    const slot = heap[a]!
    heap[a] = heap[b]!
    heap[b] = slot
    this.positions.set(heap[a]!.key, a)
    this.positions.set(slot.key, b)
  }
}
