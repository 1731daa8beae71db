import { applyCharges, type Charge, type Outcome, type Store } from '@tollgate/core/store'

/**
 * The simplest correct store: one plain array per (rule, key) in a Map, never evicted. It is the
 * oracle that the compact memory store and the Redis store are compared against.
 *
 * `dropFresh`: after each call, a state back to fresh (`freshAt ≤ now`) is dropped, as the Redis
 * store deletes it. On a steady clock that changes no decision; on one that steps back, a kept
 * fresh state would be held at its time where a dropped one starts again at `now`.
 */
export function referenceStore({ dropFresh = false } = {}): Store & {
  readonly states: Map<string, number[]>
} {
  const states = new Map<string, number[]>()

  /** Drops the states among `written` that are fresh at `now`. */
  function settle(charges: readonly Charge[], written: readonly boolean[], now: number): void {
    if (!dropFresh) return
    charges.forEach((charge, i) => {
      const id = `${charge.rule}\u0000${charge.key}`
      const state = states.get(id)
      if (written[i] && state !== undefined && charge.algorithm.freshAt(state, 0) <= now) {
        states.delete(id)
      }
    })
  }

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
      const created = charges.map((charge) => !states.has(`${charge.rule}\u0000${charge.key}`))
      const slots = charges.map((charge) => stateOf(charge, now))
      const before = slots.map((state) => [...state])
      const decisions = applyCharges(
        charges,
        slots,
        slots.map(() => 0),
        now,
      )
      // Written: every allowed charge of an admitted request but an inspection (cost 0, which
      // writes nothing), and any state that moved (a clock that stepped back), as the Redis
      // store writes them.
      const admitted = decisions.every((d, i) => d.allowed || charges[i]!.shadow)
      const written = charges.map(
        (charge, i) =>
          (admitted && decisions[i]!.allowed && charge.cost > 0) ||
          slots[i]!.some((n, j) => n !== before[i]![j]),
      )
      settle(charges, written, now)
      charges.forEach((charge, i) => {
        if (!created[i]) return
        const shared = (j: number) => slots[j] === slots[i]
        // A key seen for the first time and only inspected is not kept, by any store; nor, when
        // dropping fresh states, one not written.
        const inspected = charges.every((other, j) => !shared(j) || other.cost === 0)
        if (inspected || (dropFresh && !written.some((w, j) => w && shared(j)))) {
          states.delete(`${charge.rule}\u0000${charge.key}`)
        }
      })
      return { decisions, at: now }
    },
    refund(charges, chargedAt, now) {
      for (const charge of charges) {
        charge.algorithm.refund(stateOf(charge, now), 0, charge.cost, chargedAt, now)
      }
      settle(
        charges,
        charges.map(() => true),
        now,
      )
    },
  }
}
