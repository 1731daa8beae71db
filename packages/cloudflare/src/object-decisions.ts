import {
  type Algorithm,
  applyCharges,
  type Charge,
  checkCost,
  checkTime,
  type Decision,
  RateLimitError,
  wholeMs,
} from '@tollgate/core/store'
import type { stateTable } from './object-states.js'
import { algorithmBuilder } from './rebuild-algorithm.js'
import type { ObjectRequest, WireCharge } from './wire.js'

type StateTable = ReturnType<typeof stateTable>

/** A charge with its algorithm rebuilt, and the id of its state in the object. */
type Located = Charge & { readonly id: string; readonly actual: number | undefined }

/**
 * What an object answers a request with: its charges decided, given back or settled on its
 * key's states by core's own routines (`applyCharges`, each algorithm's `refund` and `settle`),
 * exactly as the memory store decides, then written through to storage.
 */
export function objectDecisions(table: StateTable) {
  const build = algorithmBuilder()

  function locate(wire: WireCharge): Located {
    checkCost(wire.cost)
    const text = JSON.stringify(wire.algorithm)
    const algorithm = build(wire.algorithm, text)
    // One object holds one key: its rules' states need no key in their id (whose length
    // storage keys could not hold).
    const id = `${wire.rule}\u0000${text}`
    return { ...wire, shadow: wire.shadow === true, algorithm, id, actual: wire.actual }
  }

  return async (
    request: ObjectRequest,
    clockNow: number,
  ): Promise<{ decisions: Decision[]; at: number }> => {
    const now = wholeMs(request.now ?? clockNow)
    checkTime(now)
    const charges = request.charges.map(locate)
    /** The states this request touches, each once, and each as it was before. */
    const touched = new Map<string, readonly [Algorithm, number[]]>()
    const before = new Map<string, readonly number[]>()
    /** The state of `charge`'s rule, fresh at `now` when the object holds none (or undefined). */
    const stateOf = (charge: Located, create: boolean): number[] | undefined => {
      const seen = touched.get(charge.id)
      if (seen !== undefined) return seen[1]
      let state = table.copyOf(charge.id)
      if (state === undefined && !create) return undefined
      if (state === undefined) {
        state = new Array<number>(charge.algorithm.stateSize).fill(0)
        charge.algorithm.init(state, 0, now)
      }
      touched.set(charge.id, [charge.algorithm, state])
      before.set(charge.id, state.slice())
      return state
    }
    let decisions: Decision[] = []
    if (request.op === 'consume') {
      const slots = charges.map((charge) => stateOf(charge, true)!)
      decisions = applyCharges(
        charges,
        slots,
        slots.map(() => 0),
        now,
      )
    } else {
      const chargedAt = wholeMs(request.chargedAt ?? Number.NaN)
      checkTime(chargedAt)
      if (request.op === 'refund') refund(charges, chargedAt, now, stateOf)
      else settle(charges, chargedAt, now, stateOf)
      if (request.look === true) {
        decisions = charges.map((c) => c.algorithm.decide(stateOf(c, true)!, 0, 0, now, false))
      }
    }
    // Only what changed is written: an inspection or a denial on a steady clock writes nothing.
    for (const [id, [, state]] of touched) {
      if (sameNumbers(state, before.get(id)!)) touched.delete(id)
    }
    if (touched.size > 0) await table.write(touched, now, clockNow)
    return { decisions, at: now }
  }
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => Object.is(n, b[i]))
}

type StateOf = (charge: Located, create: boolean) => number[] | undefined

/** Gives each charge back as far as it still counts; a state the object does not hold is fresh. */
function refund(charges: readonly Located[], chargedAt: number, now: number, stateOf: StateOf) {
  for (const charge of charges) {
    const state = stateOf(charge, false)
    if (state !== undefined) charge.algorithm.refund(state, 0, charge.cost, chargedAt, now)
  }
}

/**
 * Settles each charge, all checked first (one unit, as a charge is): fewer units given back as a
 * refund gives them, more charged on top, from a fresh state if the object holds none.
 */
function settle(charges: readonly Located[], chargedAt: number, now: number, stateOf: StateOf) {
  for (const { algorithm, actual } of charges) {
    checkCost(actual ?? Number.NaN)
    if (typeof algorithm.settle !== 'function') {
      throw new RateLimitError(
        'ERR_RL_INVALID_RULE',
        `${algorithm.name} charges cannot be settled`,
        {
          field: 'settle',
        },
      )
    }
  }
  for (const charge of charges) {
    const { algorithm, cost } = charge
    const actual = charge.actual!
    if (actual === cost) continue
    const state = stateOf(charge, actual > cost)
    if (state !== undefined) algorithm.settle!(state, 0, cost, actual, chargedAt, now)
  }
}
