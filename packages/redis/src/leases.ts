import type { LeaseExpiredEvent } from '@tollgate/core/observe'
import { type Clock, createScheduler, type Timers } from '@tollgate/core/store'
import type { Renewed } from './reply.js'

/** A concurrency slot this process holds in Redis: the members of one admitted charge. */
export type HeldLease = {
  /** The concurrency rule it was taken under (what its expiry is told by). */
  readonly rule: string
  readonly key: string
  /** The key's hash tag contents, for Redis Cluster slot grouping. */
  readonly tag: string
  readonly cost: number
  readonly lease: number
  /** The `Outcome.at` of the request that took it: what its release names it by. */
  readonly at: number
  /** When it was taken or last renewed, on the store's clock. */
  renewedAt: number
  /** Its units still held, as far as the renewals have told (its cost until one finds fewer). */
  units: number
}

/** What a renewal call reports, per lease: its units still held, and those it found ended. */
type Renew = (leases: readonly HeldLease[]) => Promise<readonly Renewed[]>

/**
 * The leases a store holds, and their renewal: while a request holds a slot, its lease is
 * renewed whenever it has gone a third of the lease time without, so a renewal sent on time has
 * another third (at least the store's timeoutMs) to arrive before the lease would end. One timer
 * serves every lease, armed only while some are held, so it keeps no idle process alive.
 */
export type LeaseBook = {
  /** Records a lease just taken (its request was admitted). */
  took(lease: Omit<HeldLease, 'renewedAt' | 'units'>): void
  /**
   * Removes and returns the lease of `cost` units on `key` taken at `at`, or undefined when this
   * store holds none (already given back, taken by another store, or found ended). A lease whose
   * renewal is due is renewed first, in a call that reaches Redis before the release: so whether
   * it had ended is told by Redis, as for any renewal.
   */
  give(key: string, cost: number, at: number): HeldLease | undefined
  /**
   * Tells `listener` of every unit found ended, once, by whoever removed it: a renewal of this
   * store (its own units, still there) or a load (`swept`: any process's).
   */
  observe(listener: (event: LeaseExpiredEvent) => void): void
  /** A load removed `count` ended units of `rule` (any process's leases): tells the listeners. */
  swept(rule: string, count: number): void
  /** How many leases are held. */
  readonly held: number
  /** How many renewals found a lease already ended (a process stalled past its lease time). */
  readonly lost: number
}

/** A reply missing a lease's entry: nothing of it held, nothing told. */
const NONE: Renewed = { held: 0, ended: 0 }

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
  const listeners: Array<(event: LeaseExpiredEvent) => void> = []
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
    for (const leases of byKey.values()) {
      for (const lease of leases) if (now - lease.renewedAt >= every) due.push(lease)
    }
    arm()
    renewNow(due, now)
  }

  /** Renews `due` (dated `now`); a lease found with fewer units than it held ran out. */
  function renewNow(due: readonly HeldLease[], now: number): void {
    if (due.length === 0) return
    const before = due.map((lease) => lease.renewedAt)
    for (const lease of due) lease.renewedAt = now
    renew(due).then(
      (units) => {
        due.forEach((lease, i) => {
          ended(lease, units[i] ?? NONE)
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

  /**
   * Redis holds `held` units of `lease` now. Fewer than before: the others ran out (their lease
   * ended before this renewal reached it). Only those the renewal removed itself are told: the
   * rest were swept by a load, which told them (or went with the key's own expiry, which nobody
   * tells). A lease found with none is no longer renewed, and its release gives nothing back.
   */
  function ended(lease: HeldLease, { held: units, ended: count }: Renewed): void {
    if (count > 0) tell(lease.rule, count)
    if (units >= lease.units) return
    lease.units = units
    lost++
    if (units === 0) remove(lease)
  }

  function tell(rule: string, count: number): void {
    const event: LeaseExpiredEvent = { type: 'concurrency.lease-expired', rule, count }
    for (const listener of listeners) {
      try {
        listener(event)
      } catch {
        // A listener's failure is its own (the observed limiter reports its observers').
      }
    }
  }

  /** Drops `lease` from the book, if it is still there (a release may have taken it first). */
  function remove(lease: HeldLease): void {
    const leases = byKey.get(lease.key)
    const index = leases === undefined ? -1 : leases.indexOf(lease)
    if (index < 0) return
    leases!.splice(index, 1)
    if (leases!.length === 0) byKey.delete(lease.key)
    held--
  }

  return {
    get held() {
      return held
    },
    get lost() {
      return lost
    },
    took(lease) {
      const entry: HeldLease = { ...lease, renewedAt: scheduler.now(), units: lease.cost }
      const leases = byKey.get(lease.key)
      if (leases === undefined) byKey.set(lease.key, [entry])
      else leases.push(entry)
      held++
      arm()
    },
    give(key, cost, at) {
      // Leases of one key taken at one time with one cost are alike: any of them will do.
      const lease = byKey.get(key)?.find((held) => held.at === at && held.cost === cost)
      if (lease === undefined) return undefined
      remove(lease)
      // Not renewed for a third of its time: it may have ended unseen (a stalled process).
      // Renewed now, ahead of the release on the same connection, Redis tells.
      const now = scheduler.now()
      if (now - lease.renewedAt >= every) renewNow([lease], now)
      return lease
    },
    observe(listener) {
      listeners.push(listener)
    },
    swept(rule, count) {
      if (count > 0) tell(rule, count)
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
