import { greatestCommonDivisor } from '../algorithms/integer.js'

/*
 * The linear-probing primitives of the key table, on its raw words: a slot is `stride` doubles,
 * read as 2 × stride uint32; word 0 of a slot is its fingerprint's first half + 1 (0: empty),
 * and a key's home slot is ⌊first × scale⌋.
 */
const TWO_POW_31 = 2147483648

/**
 * Empties `slot` by shifting back the entries after it that would otherwise become unreachable
 * (no tombstones); returns the slot left empty, which the caller clears.
 */
export function shiftBack(
  words: Uint32Array,
  stride: number,
  slots: number,
  scale: number,
  slot: number,
): number {
  const stride2 = stride * 2
  let hole = slot
  let next = slot
  for (;;) {
    next = next + 1 === slots ? 0 : next + 1
    const head = words[next * stride2]!
    if (head === 0) break
    const home = Math.floor((head - 1) * scale)
    // It may fill the hole unless its home lies cyclically after the hole, up to `next`.
    const fromHome = next >= home ? next - home : next + slots - home
    const fromHole = next >= hole ? next - hole : next + slots - hole
    if (fromHome >= fromHole) {
      words.copyWithin(hole * stride2, next * stride2, (next + 1) * stride2)
      hole = next
    }
  }
  return hole
}

/** The entries of a table of `oldSlots` slots, re-inserted into a new one of `slots`. */
export function rehashed(
  old: Uint32Array,
  oldSlots: number,
  stride: number,
  slots: number,
): Float64Array {
  const stride2 = stride * 2
  const data = new Float64Array(slots * stride)
  const words = new Uint32Array(data.buffer)
  const scale = slots / TWO_POW_31
  for (let from = 0; from < oldSlots; from++) {
    const head = old[from * stride2]!
    if (head === 0) continue
    let slot = Math.floor((head - 1) * scale)
    while (words[slot * stride2] !== 0) slot = slot + 1 === slots ? 0 : slot + 1
    words.set(old.subarray(from * stride2, (from + 1) * stride2), slot * stride2)
  }
  return data
}

/**
 * A step that takes the CLOCK hand through all `slots` once per turn (it shares no factor with
 * `slots`), each visit far from the last: about 0.618 of the table, the golden ratio's spread.
 */
export function handStep(slots: number): number {
  if (slots <= 2) return 1
  let step = Math.floor(slots * 0.6180339887) | 1
  while (greatestCommonDivisor(step, slots) !== 1) step += 2
  return step
}
