import type { Algorithm } from '../../algorithms/types.js'
import { messageOf } from '../../limiter/report.js'
import type { MemoryStore } from '../memory-store.js'
import type { Charge, Store } from '../types.js'
import { createLedger, type Ledger } from './ledger.js'
import type { OutageEvent, ResolvedFallbackOptions } from './options.js'
import { reconcile } from './reconcile.js'
import { shareOf } from './share.js'

// One outage of the shared store, from its first failure that left a decision to this process
// until its local admissions are charged to the store: the share of each rule, the local
// state, what was admitted, and the two lines that tell of it.

export type Outage = {
  readonly startedAt: number
  /** The number of instances each rule's allowance is divided by, read at the start. */
  readonly instances: number
  /**
   * The local state, the store's for its lifetime: a window that two outages overlap admits
   * one share in it, not one per outage.
   */
  readonly local: MemoryStore
  readonly ledger: Ledger
  /** Requests decided in this process. */
  degraded: number
  /** Calls that charged the shared store a rule and key's local admissions, so far. */
  reconciled: number
  /** `charge` with this process's share of its rule. */
  share(charge: Charge): Charge
}

export function beginOutage(
  config: ResolvedFallbackOptions,
  local: MemoryStore,
  instances: number,
  now: number,
  error: unknown,
): Outage {
  const shares = new Map<Algorithm, Algorithm>()
  const outage: Outage = {
    startedAt: now,
    instances,
    local,
    ledger: createLedger(config.maxKeys),
    degraded: 0,
    reconciled: 0,
    share(charge) {
      let share = shares.get(charge.algorithm)
      if (share === undefined) {
        share = shareOf(charge.algorithm, instances)
        shares.set(charge.algorithm, share)
      }
      return { ...charge, algorithm: share }
    },
  }
  tell(
    config,
    { type: 'start', at: now, instances, error },
    `[tollgate] WARN_STORE_OUTAGE: the shared store failed at ${iso(now)} (${messageOf(error)}); rules with onStoreError 'fallback' are decided in each process with 1/${instances} of their allowance until it answers again`,
  )
  return outage
}

/**
 * Charges the outage's local admissions to the shared store, again until none is left (requests
 * decided locally meanwhile add to it); then tells of the outage's end. False when the store
 * failed again.
 */
export async function endOutage(
  config: ResolvedFallbackOptions,
  shared: Store,
  outage: Outage,
  now: number,
): Promise<boolean> {
  while (outage.ledger.keys > 0) {
    if ((await chargeOwed(shared, outage, now)) === false) return false
  }
  const unreconciled = outage.ledger.dropped
  tell(
    config,
    {
      type: 'end',
      at: now,
      startedAt: outage.startedAt,
      degraded: outage.degraded,
      reconciled: outage.reconciled,
      unreconciled,
    },
    `[tollgate] WARN_STORE_RECOVERED: the shared store answered again at ${iso(now)}, after an outage of ${now - outage.startedAt} ms that began at ${iso(outage.startedAt)}: ${outage.degraded} requests decided locally, charged to it in ${outage.reconciled} calls (one per rule and key)${unreconciled > 0 ? `; ${unreconciled} keys were not recorded (maxKeys)` : ''}`,
  )
  return true
}

/**
 * Charges what the outage admitted and still counts to the shared store: how many rule and key
 * pairs were charged (0: nothing was owed, and the store was not called), or false, with what
 * could not be charged still owed, when the store failed again.
 */
export async function chargeOwed(
  shared: Store,
  outage: Outage,
  now: number,
): Promise<number | false> {
  const owed = outage.ledger.drain(now)
  const left = await reconcile(shared, owed, now)
  outage.reconciled += owed.length - left.length
  for (const { charge, units } of left) outage.ledger.add(charge, units, now)
  return left.length === 0 ? owed.length : false
}

function tell(config: ResolvedFallbackOptions, event: OutageEvent, line: string): void {
  try {
    if (config.logger !== false) config.logger.warn(line)
    config.onOutage?.(event)
  } catch {
    // A broken logger or hook must not turn a decision into an error.
  }
}

function iso(ms: number): string {
  try {
    return new Date(ms).toISOString()
  } catch {
    return `${ms} ms`
  }
}
