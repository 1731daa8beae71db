import { type Clock, createScheduler, type Timers } from '@tollgate/core'

/** A concurrency slot this process holds in Redis: the members of one admitted charge. */
export type HeldLease = {
  readonly key: string
  /** The key's hash tag contents, for Redis Cluster slot grouping. */
  readonly tag: string
  readonly cost: number
  readonly lease: number
  /** The `Outcome.at` of the request that took it: what its release names it by. */
  readonly at: number
  /** When it was taken or last renewed, on the store's clock. */
  renewedAt: number
}

/** What a renewal call reports, per lease: how many of its units were still held. */
type Renew = (leases: readonly HeldLease[]) => Promise<readonly number[]>

/**
 * The leases a store holds, and their renewal: while a request holds a slot, its lease is
 * renewed whenever it has gone a third of the lease time without, so a renewal sent on time has
 * another third (at least the store's timeoutMs) to arrive before the lease would end. One timer
 * serves every lease, armed only while some are held, so it keeps no idle process alive.
 */
type LeaseBook = {
  /** Records a lease just taken (its request was admitted). */
  took(lease: Omit<HeldLease, 'renewedAt'>): void
  /**
   * Removes and returns the lease of `cost` units on `key` taken at `at`, or undefined when this
   * store holds none (already given back, or taken by another store).
   */
  give(key: string, cost: number, at: number): HeldLease | undefined
  /** How many leases are held. */
  readonly held: number
  /** How many renewals found a lease already ended (a process stalled past its lease time). */
  readonly lost: number
}

export function leaseBook(options: {
  readonly leaseMs: number
  readonly clock: Clock
  readonly timers: Timers
  readonly renew: Renew
}): LeaseBook {
  const { clock, renew } = options
  const every = Math.ceil(options.leaseMs / 3)
  const scheduler = createScheduler({ clock, timers: options.timers })
  const byKey = new Map<string, HeldLease[]>()
  let held = 0
  let lost = 0
  let armed = false

  function arm(): void {
    if (armed || held === 0) return
    armed = true
    scheduler.at(scheduler.now() + every, tick)
  }

  function tick(): void {
    armed = false
    const now = scheduler.now()
    const due: HeldLease[] = []
    const before: number[] = []
    for (const leases of byKey.values()) {
      for (const lease of leases) {
        if (now - lease.renewedAt < every) continue
        due.push(lease)
        before.push(lease.renewedAt)
        lease.renewedAt = now
      }
    }
    arm()
    if (due.length === 0) return
    renew(due).then(
      (units) => {
        due.forEach((lease, i) => {
          if ((units[i] ?? 0) < lease.cost) lost++
        })
      },
      // Redis did not answer: the next tick tries again, while the lease may still be held.
      () => {
        due.forEach((lease, i) => {
          lease.renewedAt = before[i]!
        })
      },
    )
  }

  return {
    get held() {
      return held
    },
    get lost() {
      return lost
    },
    took(lease) {
      const entry: HeldLease = { ...lease, renewedAt: scheduler.now() }
      const leases = byKey.get(lease.key)
      if (leases === undefined) byKey.set(lease.key, [entry])
      else leases.push(entry)
      held++
      arm()
    },
    give(key, cost, at) {
      const leases = byKey.get(key)
      if (leases === undefined) return undefined
      // Leases of one key taken at one time with one cost are alike: any of them will do.
      const index = leases.findIndex((lease) => lease.at === at && lease.cost === cost)
      if (index < 0) return undefined
      const [lease] = leases.splice(index, 1)
      if (leases.length === 0) byKey.delete(key)
      held--
      return lease
    },
  }
}

/**
 * The runtime's timers, unreferenced: a lease never released (a request the app forgot) must not
 * keep a process from exiting.
 */
export const leaseTimers: Timers = {
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, ms)
    handle.unref?.()
    return handle
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}
