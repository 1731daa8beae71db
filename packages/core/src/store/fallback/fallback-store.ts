import type { Algorithm } from '../../algorithms/types.js'
import type { Decision } from '../../decision.js'
import { RateLimitError } from '../../errors.js'
import { messageOf } from '../../limiter/report.js'
import { type MemoryStore, memoryStore } from '../memory-store.js'
import type { Charge, Outcome, Settlement, Store } from '../types.js'
import { type BreakerState, createBreaker, type Passage } from './breaker.js'
import { createLedger, type Ledger } from './ledger.js'
import { type FallbackStoreOptions, type OutageEvent, resolveFallbackOptions } from './options.js'
import { reconcile } from './reconcile.js'
import { shareOf } from './share.js'

/** What a fallback store has done, for tests and dashboards. */
export type FallbackStats = {
  readonly state: BreakerState
  readonly outages: number
  /** Requests decided in this process, over every outage. */
  readonly degraded: number
  /** Rule and key pairs charged to the shared store on recovery, over every outage. */
  readonly reconciled: number
  readonly unreconciled: number
}

export type FallbackStore = Store & {
  consumeLocally(charges: readonly Charge[], now: number): Outcome
  stats(): FallbackStats
  /** Resolves when the reconciliation under way (if any) has ended. Never rejects. */
  reconciling(): Promise<void>
}

/** One outage: this process's share of each rule, its local state and what it admitted. */
type Outage = {
  readonly startedAt: number
  readonly instances: number
  readonly local: MemoryStore
  readonly ledger: Ledger
  readonly shares: Map<Algorithm, Algorithm>
  degraded: number
}

/**
 * Wraps the shared store (Redis, leased or not) so that rules with `onStoreError: 'fallback'`
 * keep limiting while it fails: after `failures` failed calls in a row the circuit opens and the
 * store is not called, but probed every `probeIntervalMs`; meanwhile the limiter decides those
 * rules here, on a memory store, with 1/`instances` of each rule's allowance. When the probe
 * answers, what was admitted locally and still counts is charged to the shared store, and then
 * decisions return to it. Rules that fail `open` or `closed` are unchanged.
 * @example fallbackStore(redisStore({ client }), { instances: redisMembership({ client }).count })
 */
export function fallbackStore(shared: Store, options: FallbackStoreOptions): FallbackStore {
  const config = resolveFallbackOptions(options)
  const breaker = createBreaker(config.failures, config.probeIntervalMs)
  let outage: Outage | undefined
  let lastInstances = 1
  let under = Promise.resolve()
  const totals = { outages: 0, degraded: 0, reconciled: 0, unreconciled: 0 }

  const tell = (event: OutageEvent, line: string) => {
    try {
      if (config.logger !== false) config.logger.warn(line)
      config.onOutage?.(event)
    } catch {
      // A broken logger or hook must not turn a decision into an error.
    }
  }
  const instancesNow = (): number => {
    try {
      const count = config.instances()
      if (Number.isSafeInteger(count) && count >= 1) lastInstances = count
    } catch {
      // Kept: the last count read (the membership is in the store that just failed).
    }
    return lastInstances
  }
  const begin = (now: number, error: unknown): Outage => {
    const instances = instancesNow()
    const local = memoryStore(config.local)
    outage = {
      startedAt: now,
      instances,
      local,
      ledger: createLedger(config.maxKeys),
      shares: new Map(),
      degraded: 0,
    }
    totals.outages++
    tell(
      { type: 'start', at: now, instances, error },
      `[tollgate] WARN_STORE_OUTAGE: the shared store failed at ${iso(now)} (${messageOf(error)}); rules with onStoreError 'fallback' are decided in each process with 1/${instances} of their allowance until it answers again`,
    )
    return outage
  }
  const failed = (error: unknown, now: number) => {
    if (outage === undefined) begin(now, error)
    breaker.failed(now)
  }
  const recover = (now: number, ended: Outage) => {
    const owed = ended.ledger.drain(now)
    const done = reconcile(shared, owed, now).then((left) => {
      if (left.length > 0) {
        // The store failed again: what is left stays owed, in the outage that goes on.
        for (const { charge, units } of left) ended.ledger.add(charge, units, now)
        breaker.failed(now)
        return
      }
      outage = undefined
      breaker.reconciled()
      const unreconciled = ended.ledger.dropped
      totals.reconciled += owed.length
      totals.unreconciled += unreconciled
      tell(
        {
          type: 'end',
          at: now,
          startedAt: ended.startedAt,
          degraded: ended.degraded,
          reconciled: owed.length,
          unreconciled,
        },
        `[tollgate] WARN_STORE_RECOVERED: the shared store answered again at ${iso(now)}, after an outage of ${now - ended.startedAt} ms that began at ${iso(ended.startedAt)}: ${ended.degraded} requests decided locally, ${owed.length} keys reconciled${unreconciled > 0 ? `, ${unreconciled} not (maxKeys)` : ''}`,
      )
    })
    under = under.then(() => done)
  }
  const answered = (passage: Passage, now: number) => {
    breaker.answered()
    const ended = outage
    if (ended === undefined || breaker.state === 'reconciling') return
    // A probe, or a call that answered before the circuit opened (a failure or two).
    if ((passage === 'probe' || breaker.state === 'closed') && breaker.reconcile()) {
      recover(now, ended)
    }
  }
  const shareFor = (current: Outage, charge: Charge): Charge => {
    let share = current.shares.get(charge.algorithm)
    if (share === undefined) {
      share = shareOf(charge.algorithm, current.instances)
      current.shares.set(charge.algorithm, share)
    }
    return { ...charge, algorithm: share }
  }

  const store: FallbackStore = {
    async consume(charges, now) {
      const passage = breaker.passage(now)
      if (passage === 'skip') throw circuitOpen(breaker.state)
      let outcome: Outcome
      try {
        outcome = await shared.consume(charges, now)
      } catch (error) {
        failed(error, now)
        throw error
      }
      answered(passage, now)
      return outcome
    },
    consumeLocally(charges, now) {
      const current = outage ?? begin(now, circuitOpen(breaker.state))
      const shares = charges.map((charge) => shareFor(current, charge))
      const outcome = decideShares(current.local, shares, now, config.probeIntervalMs)
      current.degraded++
      totals.degraded++
      const decisions = outcome.decisions
      const denied = decisions.some((d, i) => !d.allowed && !charges[i]!.shadow)
      if (!denied) {
        charges.forEach((charge, i) => {
          if (decisions[i]!.allowed) current.ledger.add(charge, charge.cost, now)
        })
      }
      return outcome
    },
    refund(charges, chargedAt, now) {
      const current = outage
      const local =
        current === undefined
          ? []
          : charges.filter((c) => current.ledger.take(c, c.cost, chargedAt))
      if (current !== undefined && local.length > 0) {
        current.local.refund(
          local.map((c) => shareFor(current, c)),
          chargedAt,
          now,
        )
      }
      const rest = local.length === 0 ? charges : charges.filter((c) => !local.includes(c))
      if (rest.length === 0) return
      if (breaker.state !== 'closed') throw circuitOpen(breaker.state)
      return shared.refund(rest, chargedAt, now)
    },
    stats: () => ({ state: breaker.state, ...totals }),
    reconciling: () => under,
    timeoutMs: shared.timeoutMs,
    shared: shared.shared,
  }
  const settleShared = shared.settle
  if (typeof settleShared === 'function') {
    store.settle = (settlements: readonly Settlement[], chargedAt: number, now: number) => {
      const current = outage
      const local =
        current === undefined
          ? []
          : settlements.filter((s) => current.ledger.take(s, s.cost, chargedAt))
      if (current !== undefined && local.length > 0) {
        for (const s of local) current.ledger.add(s, s.actual, chargedAt)
        current.local.settle?.(
          local.map((s) => ({ ...shareFor(current, s), actual: s.actual })),
          chargedAt,
          now,
        )
      }
      const rest = local.length === 0 ? settlements : settlements.filter((s) => !local.includes(s))
      if (rest.length === 0) return
      if (breaker.state !== 'closed') throw circuitOpen(breaker.state)
      return settleShared.call(shared, rest, chargedAt, now)
    }
  }
  return store
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
        ? {
            allowed: false,
            remaining: 0,
            limit: d.limit,
            resetAfterMs: d.resetAfterMs,
            retryAfterMs: probeIntervalMs,
          }
        : d,
  )
  return { decisions, at: outcome.at }
}

function circuitOpen(state: BreakerState): RateLimitError {
  return new RateLimitError(
    'ERR_RL_STORE_UNAVAILABLE',
    state === 'reconciling'
      ? 'the shared store is being given the outage’s local admissions (fallbackStore)'
      : 'the shared store failed and its circuit is open until a probe answers (fallbackStore)',
  )
}

function iso(ms: number): string {
  try {
    return new Date(ms).toISOString()
  } catch {
    return `${ms} ms`
  }
}
