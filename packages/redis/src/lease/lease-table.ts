import type { Charge, Clock, Decision, Store, Timers } from '@tollgate/core/store'

/** Units a process took from Redis ahead of its requests, spent locally until they run out. */
export type Lease = {
  /** Unspent and not held by a request on its way to Redis. */
  units: number
  /** The grant's `Outcome.at`: a refund's `chargedAt`. */
  readonly grantedAt: number
  /** The caller's time when the grant was asked for: the lease's life starts here. */
  readonly grantNow: number
  /** On the caller's clock: no unit of the lease is admitted from here on. */
  readonly expiresAt: number
  /** A fixed window's lease ends with its window (+∞ for a rate rule). */
  readonly windowEndsAt: number
  /** What Redis said was left after the grant, and when the key would be full again. */
  readonly remainingAtGrant: number
  readonly resetAfterMs: number
  timer: unknown
  ended: boolean
}

/** What a process knows of one leased key. */
export type LeaseEntry = {
  /** The rule, algorithm and key of the charges this entry leases for. */
  readonly charge: Charge
  /** The largest lease taken beyond a request's own cost (the `maxShare` of the limit). */
  readonly cap: number
  /** Units the next grant takes beyond what its request needs. */
  size: number
  lease: Lease | undefined
  /** A grant on its way to Redis: others wait for it rather than ask for their own. */
  pending: Promise<void> | undefined
  /** The cost of the requests waiting for that grant: the next one takes at least as much. */
  waiting: number
}

/** Unit counts since the store was made; granted = spent + returned + lapsed + held. */
export type LeaseStats = {
  /** Grants that took units beyond their request's own cost. */
  grants: number
  /** Units taken ahead of requests (beyond each grant's own request). */
  grantedUnits: number
  /** Requests decided locally, without a call to Redis. */
  localDecisions: number
  /** Unspent units given back to Redis (a fixed window's lease that ended before its window). */
  returnedUnits: number
  /** Unspent units that were not given back: a rate rule's, or a window's that had ended. */
  lapsedUnits: number
}

export function leaseTable(
  store: Store,
  config: { readonly ttlMs: number; readonly timers: Timers; readonly clock: Clock },
) {
  const { ttlMs, timers, clock } = config
  const byRule = new Map<string, Map<string, LeaseEntry>>()
  let entries = 0
  let sweepTimer: unknown
  const returning = new Set<Promise<void>>()
  const stats: LeaseStats = {
    grants: 0,
    grantedUnits: 0,
    localDecisions: 0,
    returnedUnits: 0,
    lapsedUnits: 0,
  }

  function entryOf(charge: Charge, maxShare: number): LeaseEntry {
    let keys = byRule.get(charge.rule)
    if (keys === undefined) {
      keys = new Map()
      byRule.set(charge.rule, keys)
    }
    let entry = keys.get(charge.key)
    if (entry === undefined) {
      const cap = Math.floor(maxShare * charge.algorithm.limit)
      entry = { charge, cap, size: 0, lease: undefined, pending: undefined, waiting: 0 }
      keys.set(charge.key, entry)
      entries++
      sweepTimer ??= arm(sweep, ttlMs)
    }
    return entry
  }

  /** The entry's lease when it may still be spent at `now`. */
  function live(entry: LeaseEntry, now: number): Lease | undefined {
    const lease = entry.lease
    return lease !== undefined && !lease.ended && now < lease.expiresAt ? lease : undefined
  }

  /** Records a grant of `units` ahead, which Redis decided (`decision`) at `at`. */
  function grant(entry: LeaseEntry, units: number, decision: Decision, at: number, now: number) {
    if (entry.lease !== undefined) end(entry, entry.lease, now)
    const windowed = entry.charge.algorithm.name === 'fixed_window'
    const windowEndsAt = windowed ? now + decision.resetAfterMs : Number.POSITIVE_INFINITY
    const lease: Lease = {
      units,
      grantedAt: at,
      grantNow: now,
      expiresAt: Math.min(now + ttlMs, windowEndsAt),
      windowEndsAt,
      remainingAtGrant: decision.remaining,
      resetAfterMs: decision.resetAfterMs,
      timer: undefined,
      ended: false,
    }
    entry.lease = lease
    if (units > 0) {
      stats.grants++
      stats.grantedUnits += units
      lease.timer = arm(() => end(entry, lease, clock.now()), lease.expiresAt - now)
    }
  }

  /** Ends a lease: its unspent units go back to Redis when that is exact, else they lapse. */
  function end(entry: LeaseEntry, lease: Lease, now: number): void {
    if (lease.ended) return
    lease.ended = true
    if (lease.timer !== undefined) timers.clearTimeout(lease.timer)
    const unspent = lease.units
    lease.units = 0
    if (unspent === 0) return
    entry.size = Math.floor(entry.size / 2)
    // A fixed window takes a refund back exactly while its window lasts. A rate rule's refund is
    // clamped at a full bucket and cannot tell whether the bucket filled up meanwhile, so
    // returning units could admit beyond the burst: they lapse, and refill makes them up.
    if (lease.windowEndsAt === Number.POSITIVE_INFINITY || now >= lease.windowEndsAt) {
      stats.lapsedUnits += unspent
      return
    }
    const back: Charge = { ...entry.charge, cost: unspent, shadow: false }
    const done = Promise.resolve()
      .then(() => store.refund([back], lease.grantedAt, now))
      .then(
        () => {
          stats.returnedUnits += unspent
        },
        () => {
          // Redis kept them: stricter, never looser.
          stats.lapsedUnits += unspent
        },
      )
      .finally(() => returning.delete(done))
    returning.add(done)
  }

  /** Gives units held by a request that did not go through back to their lease. */
  function restore(entry: LeaseEntry, lease: Lease, units: number, now: number): void {
    if (units === 0) return
    if (!lease.ended) {
      lease.units += units
      return
    }
    lease.ended = false
    lease.units = units
    end(entry, lease, now)
  }

  /** Forgets keys with nothing leased and nothing on its way, so idle keys cost no memory. */
  function sweep(): void {
    sweepTimer = undefined
    const now = clock.now()
    for (const [rule, keys] of byRule) {
      for (const [key, entry] of keys) {
        if (entry.pending !== undefined) continue
        const lease = entry.lease
        if (lease !== undefined && !lease.ended && now < lease.expiresAt) continue
        if (lease !== undefined) end(entry, lease, now)
        keys.delete(key)
        entries--
      }
      if (keys.size === 0) byRule.delete(rule)
    }
    if (entries > 0) sweepTimer = arm(sweep, ttlMs)
  }

  function arm(run: () => void, ms: number): unknown {
    const handle = timers.setTimeout(run, ms)
    // A lease never keeps a process alive.
    ;(handle as { unref?: () => void } | null)?.unref?.()
    return handle
  }

  /** Ends every lease (returning what can be returned) and stops the timers. */
  async function close(): Promise<void> {
    const now = clock.now()
    for (const keys of byRule.values()) {
      for (const entry of keys.values()) if (entry.lease !== undefined) end(entry, entry.lease, now)
    }
    byRule.clear()
    entries = 0
    if (sweepTimer !== undefined) timers.clearTimeout(sweepTimer)
    sweepTimer = undefined
    await Promise.all(returning)
  }

  /** Resolves once every return on its way has reached the store. */
  async function flush(): Promise<void> {
    await Promise.all(returning)
  }

  return { entryOf, live, grant, end, restore, close, flush, stats }
}
