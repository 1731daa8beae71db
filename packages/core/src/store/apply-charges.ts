import type { StateSlots } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import type { Charge } from './types.js'

/**
 * Decides a request's charges as one unit over states that are already in memory, following the
 * `Store` contract: all enforcing charges allowed → every allowed charge written; any enforcing
 * charge denied → nothing written, and the charges that would have passed reported at cost 0.
 * `slots[i]`/`offsets[i]` locate the state of `charges[i]`, which the caller has initialised.
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
    const decision = charge.algorithm.decide(slots[i]!, offsets[i]!, charge.cost, now, false)
    dryRun[i] = decision
    if (!decision.allowed && !charge.shadow) denied = true
  }
  for (let i = 0; i < count; i++) {
    const charge = charges[i]!
    if (!dryRun[i]!.allowed) continue
    // Denied request: report what is left without taking it. Admitted: take it for real.
    dryRun[i] = denied
      ? charge.algorithm.decide(slots[i]!, offsets[i]!, 0, now, false)
      : charge.algorithm.decide(slots[i]!, offsets[i]!, charge.cost, now, true)
  }
  return dryRun
}
