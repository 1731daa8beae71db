import { applyCharges } from '../store/apply-charges.js'
import type { Store } from '../store/types.js'

/** As `mapStore`'s default: the most keys held, the least recently used dropped beyond it. */
const MAX_KEYS = 10_000

/**
 * The edge entry's default store: `mapStore()` in fewer bytes, for the one middleware that
 * builds it. It decides exactly as `mapStore` (the same `applyCharges` over states kept in a
 * `Map` in use order, bounded by key count) while leaving out what that middleware never needs:
 * the checks of charges its rules were validated for (costs within capacity, whole-ms times read
 * by the kit's clock), states shared between rules of different algorithms, and refunds (the
 * edge entry takes none).
 */
export function edgeStore(): Store {
  const states = new Map<string, number[]>()
  return {
    consume(charges, now) {
      const slots = charges.map(({ rule, key, algorithm }) => {
        const id = `${rule}\u0000${key}`
        let state = states.get(id)
        if (state === undefined) {
          state = new Array<number>(algorithm.stateSize).fill(0)
          algorithm.init(state, 0, now)
        } else states.delete(id)
        states.set(id, state)
        return state
      })
      const decisions = applyCharges(
        charges,
        slots,
        slots.map(() => 0),
        now,
      )
      for (const id of states.keys()) {
        if (states.size <= MAX_KEYS) break
        states.delete(id)
      }
      return { decisions, at: now }
    },
    refund() {},
  }
}
