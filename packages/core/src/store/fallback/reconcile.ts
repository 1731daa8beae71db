import type { Store } from '../types.js'
import type { Owed } from './ledger.js'

/** Calls in flight at once while charging an outage's admissions. */
const PARALLEL = 16

/**
 * Charges the shared store, at `now`, with the units each rule and key was admitted locally
 * and that still count: one call per key, all of its units. A key that cannot take them all is
 * charged what it has left (its `remaining`), so it ends the outage spent, never in credit. Each
 * call places the units at `now`, which is stricter than when they were admitted: they count a
 * little longer (see docs/concepts/failure-modes.md). Resolves with what is still owed when
 * the store failed again (everything from the failed call on); never rejects.
 */
export async function reconcile(
  shared: Store,
  owed: readonly Owed[],
  now: number,
): Promise<Owed[]> {
  let next = 0
  let failedAt = -1
  const worker = async () => {
    while (failedAt < 0 && next < owed.length) {
      const index = next++
      try {
        await chargeOwed(shared, owed[index]!, now)
      } catch {
        if (failedAt < 0 || index < failedAt) failedAt = index
      }
    }
  }
  const workers = Array.from({ length: Math.min(PARALLEL, owed.length) }, worker)
  await Promise.all(workers)
  // A failure leaves its key and every key not yet tried owed; keys tried after it by other
  // workers were charged, and charging them twice would be stricter, not looser.
  return failedAt < 0 ? [] : owed.slice(failedAt)
}

async function chargeOwed(shared: Store, { charge, units }: Owed, now: number): Promise<void> {
  const cost = Math.min(units, charge.algorithm.limit)
  const outcome = await shared.consume([{ ...charge, cost }], now)
  const decision = outcome.decisions[0]
  if (decision === undefined || decision.allowed || !(decision.remaining > 0)) return
  await shared.consume([{ ...charge, cost: decision.remaining }], now)
}
