import type { StateSlots } from './types.js'

/**
 * A copy of a key's state (its first `size` numbers) for a cost-0 inspection to decide on. An
 * inspection writes nothing, not even the move a clock that stepped back makes: written, the
 * move would become the key's new starting point, and a charge after it would refill, age its
 * entries or open its next window from the inspection's time instead of its own. Decided on a
 * copy, the inspection reports what a charge at its time would see and leaves the state as
 * stored.
 */
export function inspectionCopy(slots: StateSlots, offset: number, size: number): number[] {
  // Array's slice, for a typed array's too: an array of numbers, whatever the state is kept in.
  return Array.prototype.slice.call(slots, offset, offset + size)
}
