import { applyCharges, type Charge, type Outcome, type Store } from '@tollgate/core'

/**
 * The simplest correct store: one plain array per (rule, key) in a Map, never evicted. It is the
 * oracle that the compact memory store and the Redis store are compared against.
 */
export function referenceStore(): Store & { readonly states: Map<string, number[]> } {
  const states = new Map<string, number[]>()

  function stateOf(charge: Charge, now: number): number[] {
    const id = `${charge.rule}\u0000${charge.key}`
    let state = states.get(id)
    if (state === undefined) {
      state = new Array<number>(charge.algorithm.stateSize).fill(0)
      charge.algorithm.init(state, 0, now)
      states.set(id, state)
    }
    return state
  }

  return {
    states,
    consume(charges, now): Outcome {
      const slots = charges.map((charge) => stateOf(charge, now))
      return {
        decisions: applyCharges(
          charges,
          slots,
          slots.map(() => 0),
          now,
        ),
        at: now,
      }
    },
    refund(charges, chargedAt, now) {
      for (const charge of charges) {
        charge.algorithm.refund(stateOf(charge, now), 0, charge.cost, chargedAt, now)
      }
    },
  }
}
