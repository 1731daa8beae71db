import { systemClock } from '@tollgate/core'
import type { Charge, Clock, Decision, Outcome, Store } from '@tollgate/core/store'
import { type Lease, type LeaseEntry, type LeaseStats, leaseTable } from './lease-table.js'
import { LEASABLE, type LeaseOptions, resolveLeaseOptions } from './options.js'

/** Options of `leasedStore`: the rules that may lease, how long and how much, and the clock. */
export type LeasedStoreOptions = LeaseOptions & {
  /** The clock the limiter decides on, which ends leases too. @default the system clock */
  readonly clock?: Clock
}

/** A store that decides hot keys of its leased rules locally, from units taken ahead. */
export interface LeasedStore extends Store {
  /**
   * Decides a request's charges: a leased rule's hot key from its lease, in this process; the rest,
   * and a lease that ran dry, by the wrapped store.
   */
  consume(charges: readonly Charge[], now: number): Outcome | Promise<Outcome>
  refund(charges: readonly Charge[], chargedAt: number, now: number): void | Promise<void>
  /** Counts of units granted, spent, returned and lapsed (for tests and metrics). */
  stats(): Readonly<LeaseStats>
  /** Ends every lease, giving back what can be given back; call it when the process stops. */
  close(): Promise<void>
  /** Resolves once the unspent units of leases that ended are back in the store. */
  flush(): Promise<void>
}

/** How one charge of a request is decided: from its lease, or by Redis with a top-up. */
type Part = {
  readonly entry: LeaseEntry
  /** The lease units were held from (none when there was no live lease). */
  readonly lease: Lease | undefined
  /** Units of the request taken from the lease. */
  readonly used: number
  /** Taken from Redis beyond the request's own cost, for the next lease; -1: decided locally. */
  readonly extra: number
}

/** A grant still waiting for its reply makes others wait this many times at most. */
const MAX_WAITS = 4

/**
 * Wraps a store (the Redis store) so that the keys of `options.rules` may take a lease: one call
 * charges a request and, beyond it, part of the key's allowance, which the process then spends
 * on the key's next requests without a round trip, until the lease is spent or expires. A lease
 * is a charge made ahead, so the processes together never admit more units than Redis granted;
 * see docs/concepts/redis.md#local-leases-for-hot-keys for the bound.
 * @example
 * const store = leasedStore(redisStore({ client }), { rules: [perTenant], ttlMs: 1000 })
 */
export function leasedStore(store: Store, options: LeasedStoreOptions): LeasedStore {
  const { rules, ttlMs, maxShare, timers } = resolveLeaseOptions(options)
  const table = leaseTable(store, { ttlMs, timers, clock: options.clock ?? systemClock })
  const { stats } = table

  const leasable = (charge: Charge) =>
    rules.has(charge.rule) &&
    !charge.shadow &&
    LEASABLE.has(charge.algorithm.name) &&
    charge.cost <= charge.algorithm.limit

  /** Plans each charge (undefined: as it is, to Redis); holds the lease units it spends. */
  function plan(charges: readonly Charge[], now: number, attempt: number) {
    const parts: (Part | undefined)[] = new Array(charges.length)
    const waitFor: Promise<void>[] = []
    let remote = false
    for (let i = 0; i < charges.length; i++) {
      const charge = charges[i]!
      if (!leasable(charge) || repeated(charges, i)) {
        remote = true
        continue
      }
      const entry = table.entryOf(charge, maxShare)
      const lease = table.live(entry, now)
      const cost = charge.cost
      if (lease !== undefined && lease.units >= cost) {
        lease.units -= cost
        parts[i] = { entry, lease, used: cost, extra: -1 }
        continue
      }
      remote = true
      if (entry.pending !== undefined && attempt < MAX_WAITS) {
        entry.waiting += cost
        waitFor.push(entry.pending)
        continue
      }
      if (cost === 0) continue
      const used = lease?.units ?? 0
      if (lease !== undefined) lease.units = 0
      // Spent out while it lasted: the local rate needs more, so the next lease doubles.
      if (entry.lease !== undefined && now < entry.lease.expiresAt && attempt === 0) {
        entry.size = Math.min(entry.cap, Math.max(1, entry.size * 2))
      }
      const need = cost - used
      // Requests that waited for the last grant and found too little: take enough for them too.
      if (attempt > 0 && attempt <= MAX_WAITS)
        entry.size = Math.min(entry.cap, Math.max(entry.size, entry.waiting))
      entry.waiting = 0
      const extra = Math.max(0, Math.min(entry.size, charge.algorithm.limit - need))
      parts[i] = { entry, lease, used, extra }
    }
    return { parts, waitFor, remote }
  }

  function release(parts: readonly (Part | undefined)[], now: number): void {
    for (const part of parts) {
      if (part?.lease !== undefined) table.restore(part.entry, part.lease, part.used, now)
    }
  }

  function localDecision(part: Part, now: number): Decision {
    const lease = part.lease!
    const limit = part.entry.charge.algorithm.limit
    return {
      allowed: true,
      remaining: Math.min(limit, lease.remainingAtGrant + lease.units),
      limit,
      resetAfterMs: Math.max(0, lease.resetAfterMs - (now - lease.grantNow)),
      retryAfterMs: undefined,
    }
  }

  function decide(
    charges: readonly Charge[],
    now: number,
    attempt: number,
  ): Outcome | Promise<Outcome> {
    const { parts, waitFor, remote } = plan(charges, now, attempt)
    if (waitFor.length > 0) {
      release(parts, now)
      return Promise.all(waitFor).then(() => decide(charges, now, attempt + 1))
    }
    if (!remote) {
      stats.localDecisions++
      return { decisions: parts.map((part) => localDecision(part!, now)), at: now }
    }
    return viaStore(charges, parts, now, attempt)
  }

  async function viaStore(
    charges: readonly Charge[],
    parts: readonly (Part | undefined)[],
    now: number,
    attempt: number,
  ): Promise<Outcome> {
    const indices: number[] = []
    const sent: Charge[] = []
    let settled!: () => void
    const pending = new Promise<void>((resolve) => {
      settled = resolve
    })
    for (let i = 0; i < charges.length; i++) {
      const part = parts[i]
      if (part !== undefined && part.extra === -1) continue
      indices.push(i)
      const charge = charges[i]!
      if (part === undefined) sent.push(charge)
      else {
        sent.push({ ...charge, cost: charge.cost - part.used + part.extra })
        part.entry.pending = pending
      }
    }
    let outcome: Outcome
    try {
      outcome = await store.consume(sent, now)
    } catch (error) {
      release(parts, now)
      throw error
    } finally {
      for (const part of parts) if (part?.entry.pending === pending) part.entry.pending = undefined
      settled()
    }
    const decisions: Decision[] = new Array(charges.length)
    const admitted = outcome.decisions.every((d, j) => d.allowed || sent[j]!.shadow)
    // Denied only for the lease on top of it (what is left still covers the request): retry.
    let retry = !admitted
    indices.forEach((index, j) => {
      const decision = outcome.decisions[j]!
      const part = parts[index]
      decisions[index] = decision
      if (part === undefined) return
      const need = charges[index]!.cost - part.used
      if (admitted) {
        table.grant(part.entry, part.extra, decision, outcome.at, now)
        decisions[index] = {
          ...decision,
          remaining: Math.min(decision.limit, decision.remaining + part.extra),
        }
      } else if (!decision.allowed) {
        // The lease on top was too much for what is left: take what is left instead.
        part.entry.size = Math.max(0, Math.min(part.entry.size, decision.remaining - need))
        if (part.extra === 0 || decision.remaining < need) retry = false
      }
    })
    if (admitted) {
      for (let i = 0; i < charges.length; i++) {
        const part = parts[i]
        if (part !== undefined && part.extra === -1) decisions[i] = localDecision(part, now)
      }
      return { decisions, at: outcome.at }
    }
    release(parts, now)
    const plainDenied = indices.some(
      (index, j) =>
        !outcome.decisions[j]!.allowed && !sent[j]!.shadow && parts[index] === undefined,
    )
    // Once: the retry (attempt past MAX_WAITS) neither waits nor doubles nor retries again.
    if (retry && !plainDenied && attempt <= MAX_WAITS) return decide(charges, now, MAX_WAITS + 1)
    for (let i = 0; i < charges.length; i++) {
      const part = parts[i]
      if (part !== undefined && part.extra === -1) decisions[i] = localDecision(part, now)
    }
    return { decisions, at: outcome.at }
  }

  return {
    ...(store.timeoutMs === undefined ? {} : { timeoutMs: store.timeoutMs }),
    ...(store.shared === undefined ? {} : { shared: store.shared }),
    consume(charges, now) {
      // Rules without leases go straight through, as if there were no wrapper.
      if (!charges.some(leasable)) return store.consume(charges, now)
      try {
        return decide(charges, now, 0)
      } catch (error) {
        return Promise.reject(error)
      }
    },
    // A refund reaches Redis as it would without leases: the units it gives back were charged
    // there, by the request or by the lease it was spent from.
    refund: (charges, chargedAt, now) => store.refund(charges, chargedAt, now),
    stats: () => ({ ...stats }),
    close: () => table.close(),
    flush: () => table.flush(),
  }
}

/** A charge of the same rule and key earlier in the request: such requests go as they are. */
function repeated(charges: readonly Charge[], index: number): boolean {
  const { rule, key } = charges[index]!
  for (let i = 0; i < charges.length; i++) {
    if (i !== index && charges[i]!.rule === rule && charges[i]!.key === key) return true
  }
  return false
}
