import type { Decision } from '../../decision.js'
import { RateLimitError } from '../../errors.js'
import { type MemoryStore, memoryStore } from '../memory-store.js'
import type { Charge, Outcome, Settlement, Store } from '../types.js'
import { type BreakerState, createBreaker } from './breaker.js'
import type { FallbackStoreOptions } from './options.js'
import { resolveFallbackOptions } from './options.js'
import { beginOutage, chargeOwed, endOutage, type Outage } from './outage.js'

/** What a fallback store has done, for tests and dashboards. */
export type FallbackStats = {
  readonly state: BreakerState
  readonly outages: number
  /** Requests decided in this process, over every outage. */
  readonly degraded: number
  /** Calls that charged the shared store local admissions (one per rule and key), over every ended outage. */
  readonly reconciled: number
}

/**
 * What `fallbackStore` returns: a `Store` that decides locally, with each instance's share, while
 * the shared store fails, and reports how that went.
 */
export type FallbackStore = Store & {
  /**
   * Decides `charges` in this process with each rule's share of its allowance; the limiter calls it
   * after `consume` failed, for rules whose `onStoreError` is `'fallback'`.
   */
  consumeLocally(charges: readonly Charge[], now: number): Outcome
  /**
   * The breaker's state and the totals over every outage so far: for a health check or a metric.
   */
  stats(): FallbackStats
  /** Resolves when the recovery under way (if any) has ended. Never rejects. */
  reconciling(): Promise<void>
}

/**
 * Wraps the shared store (Redis, leased or not) so that rules with `onStoreError: 'fallback'`
 * keep limiting while it fails: after `failures` failed calls in a row the circuit opens and the
 * store is not called, but probed every `probeIntervalMs`; meanwhile the limiter decides those
 * rules here, on a memory store, with 1/`instances` of each rule's allowance. The first request
 * to reach the store again (the probe) first charges it what was admitted locally and still
 * counts, and only then is decided by it. Rules that fail `open` or `closed` are unchanged.
 * @example fallbackStore(redisStore({ client }), { instances: redisMembership({ client }).count })
 */
export function fallbackStore(shared: Store, options: FallbackStoreOptions): FallbackStore {
  const config = resolveFallbackOptions(options)
  const breaker = createBreaker(config.failures, config.probeIntervalMs)
  const localState = memoryStore(config.local)
  let outage: Outage | undefined
  let recovery: Promise<unknown> = Promise.resolve()
  let lastInstances = 1
  const totals = { outages: 0, degraded: 0, reconciled: 0 }

  const instancesNow = (): number => {
    try {
      const count = config.instances()
      if (Number.isSafeInteger(count) && count >= 1) lastInstances = count
    } catch {
      // Kept: the last count read (the membership may live in the store that just failed).
    }
    return lastInstances
  }
  const current = (now: number, error: unknown): Outage => {
    if (outage === undefined) {
      outage = beginOutage(config, localState, instancesNow(), now, error)
      totals.outages++
    }
    return outage
  }
  /** The store answered after an outage: what was admitted meanwhile is charged, then it ends. */
  const finish = async (ending: Outage, now: number): Promise<void> => {
    const done = endOutage(config, shared, ending, now)
    recovery = done
    if (!(await done)) {
      breaker.failed(now)
      return
    }
    totals.reconciled += ending.reconciled
    outage = undefined
    breaker.reconciled()
  }

  /**
   * The first probe after an outage: charges the store what this instance admitted locally (or,
   * having admitted nothing, asks it at cost 0), and decides the request locally still: see
   * breaker.ts for why decisions return to the store only at the next probe.
   */
  const firstProbe = async (charges: readonly Charge[], now: number): Promise<never> => {
    try {
      const charged = outage === undefined ? 0 : await chargeOwed(shared, outage, now)
      if (charged === false) throw circuitOpen('open')
      // Nothing was owed, so the store was not asked yet: asked now, at cost 0.
      if (charged === 0) await shared.consume(zeroCost(charges), now)
    } catch (error) {
      breaker.failed(now)
      throw error
    }
    breaker.confirming(now)
    throw circuitOpen('confirming')
  }

  const store: FallbackStore = {
    async consume(charges, now) {
      const passage = breaker.passage(now)
      if (passage === 'skip') {
        // Confirming: the store answers; what this instance admitted since is charged to it as
        // it goes, so an instance that returns to the store finds the others' admissions there.
        if (breaker.state === 'confirming' && outage !== undefined && outage.ledger.keys > 0) {
          if ((await chargeOwed(shared, outage, now)) === false) breaker.failed(now)
        }
        throw circuitOpen(breaker.state)
      }
      if (passage === 'first-probe') return firstProbe(charges, now)
      let outcome: Outcome
      try {
        // The last probe charges what was admitted locally since the first, then its request.
        if (
          passage === 'probe' &&
          outage !== undefined &&
          (await chargeOwed(shared, outage, now)) === false
        ) {
          throw circuitOpen('open')
        }
        outcome = await shared.consume(charges, now)
      } catch (error) {
        if (breaker.failed(now)) current(now, error)
        throw error
      }
      breaker.answered()
      if (outage !== undefined && breaker.reconcile()) await finish(outage, now)
      return outcome
    },
    consumeLocally(charges, now) {
      const ongoing = current(now, circuitOpen(breaker.state))
      const outcome = decideShares(
        ongoing.local,
        charges.map(ongoing.share),
        now,
        config.probeIntervalMs,
      )
      ongoing.degraded++
      totals.degraded++
      const decisions = outcome.decisions
      if (!decisions.some((d, i) => !d.allowed && !charges[i]!.shadow)) {
        charges.forEach((charge, i) => {
          if (decisions[i]!.allowed) ongoing.ledger.add(charge, charge.cost, now)
        })
      }
      return outcome
    },
    refund(charges, chargedAt, now) {
      const local = takeLocal(outage, charges, chargedAt)
      if (local.length > 0) outage!.local.refund(local.map(outage!.share), chargedAt, now)
      const rest = charges.filter((charge) => !local.includes(charge))
      if (rest.length === 0) return
      if (breaker.state !== 'closed') throw circuitOpen(breaker.state)
      return shared.refund(rest, chargedAt, now)
    },
    stats: () => ({ state: breaker.state, ...totals }),
    reconciling: () =>
      recovery.then(
        () => undefined,
        () => undefined,
      ),
    timeoutMs: shared.timeoutMs,
    shared: shared.shared,
  }
  const settleShared = shared.settle
  if (typeof settleShared === 'function') {
    store.settle = (settlements: readonly Settlement[], chargedAt: number, now: number) => {
      const local = takeLocal(outage, settlements, chargedAt)
      if (local.length > 0) {
        for (const s of local) outage!.ledger.add(s, s.actual, chargedAt)
        const shares = local.map((s) => ({ ...outage!.share(s), actual: s.actual }))
        outage!.local.settle(shares, chargedAt, now)
      }
      const rest = settlements.filter((s) => !local.includes(s))
      if (rest.length === 0) return
      if (breaker.state !== 'closed') throw circuitOpen(breaker.state)
      return settleShared.call(shared, rest, chargedAt, now)
    }
  }
  return store
}

function zeroCost(charges: readonly Charge[]): Charge[] {
  return charges.map((charge) => ({ ...charge, cost: 0 }))
}

/** The charges that were admitted in this process during the outage (taken off its ledger). */
function takeLocal<C extends Charge>(
  outage: Outage | undefined,
  charges: readonly C[],
  at: number,
): C[] {
  if (outage === undefined) return []
  return charges.filter((charge) => outage.ledger.take(charge, charge.cost, at))
}

/**
 * The local decisions on the shares. A cost above a share can never pass locally: the request
 * is inspected at cost 0 and that charge denied until the next probe (a shadow one only reported).
 */
function decideShares(
  local: MemoryStore,
  shares: readonly Charge[],
  now: number,
  probeIntervalMs: number,
): Outcome {
  const tooBig = shares.map((s) => s.cost > s.algorithm.limit)
  if (!tooBig.includes(true)) return local.consume(shares, now)
  const enforcingTooBig = shares.some((s, i) => tooBig[i] && !s.shadow)
  const tried = shares.map((s, i) => (enforcingTooBig || tooBig[i] ? { ...s, cost: 0 } : s))
  const outcome = local.consume(tried, now)
  const decisions = outcome.decisions.map(
    (d, i): Decision =>
      tooBig[i]
        ? { ...d, allowed: false, remaining: 0, retryAfterMs: probeIntervalMs, delayMs: undefined }
        : d,
  )
  return { decisions, at: outcome.at }
}

function circuitOpen(state: BreakerState): RateLimitError {
  return new RateLimitError('ERR_RL_STORE_UNAVAILABLE', `${WHY[state]} (fallbackStore)`)
}

const WHY: Readonly<Record<BreakerState, string>> = {
  closed: 'the shared store failed',
  open: 'the shared store failed and its circuit is open until a probe answers',
  probing: 'the shared store is being probed',
  confirming:
    'the shared store answered and was charged this instance’s outage admissions; decisions return to it at the next probe',
  reconciling: 'the shared store is being charged what was admitted locally during its outage',
}
