// As it was before its code was shortened, for old-store-differential.test.ts.
import type { StateSlots } from '../../algorithms/types.js'
import type { Decision } from '../../decision.js'
import type { Charge } from '../types.js'

/**
 * Decides a request's charges as one unit over states that are already in memory, following the
 * `Store` contract: all enforcing charges allowed → every allowed charge written; any enforcing
 * charge denied → nothing written, and the charges that would have passed reported at cost 0.
 * `slots[i]`/`offsets[i]` locate the state of `charges[i]`, which the caller has initialised;
 * charges of one state (one rule and key charged twice) share them.
 */
export function applyCharges(
  charges: readonly Charge[],
  slots: readonly StateSlots[],
  offsets: readonly number[],
  now: number,
): Decision[] {
  const count = charges.length
  const dryRun: Decision[] = new Array(count)
  let denied = false
  for (let i = 0; i < count; i++) {
    const charge = charges[i]!
    // A state charged earlier in the request is tried with the earlier charges that passed
    // added, so that no commit finds the room gone: the request is all or nothing. Charges
    // that together exceed the limit can never pass: denied, with what is left.
    let cost = charge.cost
    let total = charge.cost
    for (let j = 0; j < i; j++) {
      if (slots[j] !== slots[i] || offsets[j] !== offsets[i]) continue
      total += charges[j]!.cost
      if (dryRun[j]!.allowed) cost += charges[j]!.cost
    }
    // Charges that never pass are denied from a look at cost 0: what is left, and no sooner
    // retry than the key is whole again.
    const never = charge.cost <= charge.algorithm.limit && total > charge.algorithm.limit
    const look = charge.algorithm.decide(slots[i]!, offsets[i]!, never ? 0 : cost, now, false)
    const decision = never ? { ...look, allowed: false, retryAfterMs: look.resetAfterMs } : look
    dryRun[i] = decision
    if (!decision.allowed && !charge.shadow) denied = true
  }
  for (let i = 0; i < count; i++) {
    const charge = charges[i]!
    if (!dryRun[i]!.allowed) continue
    // Denied request: report what is left without taking it. Admitted: take it for real.
    dryRun[i] = charge.algorithm.decide(
      slots[i]!,
      offsets[i]!,
      denied ? 0 : charge.cost,
      now,
      !denied,
    )
  }
  return dryRun
}
