// Expired concurrency leases on a real Redis, counted exactly once each by whoever removes them:
// a load that sweeps them (the leases of a process that died, or of one that stalled), or the
// holder's renewal that finds its own ended and still there. Released leases never count.
import type { RuleConfig, Verdict } from '@tollgate/core'
import { concurrency } from '@tollgate/core'
import { observedLimiter } from '@tollgate/core/observe'
import type { Charge, Timers } from '@tollgate/core/store'
import { ATTRIBUTES as A, INSTRUMENTS as I, tollgateMetrics } from '@tollgate/opentelemetry'
import { type RedisStore, redisStore } from '@tollgate/redis'
import { type ManualClock, manualClock } from '@tollgate/test-utils'
import { inMemoryMetrics, linesOf } from '@tollgate/test-utils/metrics'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

vi.setConfig({ testTimeout: 120_000 })

const LEASE_MS = 3_000
/** The store renews a lease once it has gone this long without. */
const EVERY = LEASE_MS / 3
const T0 = 1_000_000
const LIMIT = 4

/** Timers that fire only when the test says: a process whose event loop stalled, or died. */
function heldTimers() {
  const armed = new Map<number, () => void>()
  let id = 0
  const timers: Timers = {
    setTimeout(callback) {
      armed.set(++id, callback)
      return id
    },
    clearTimeout: (handle) => armed.delete(handle as number),
  }
  return {
    timers,
    /** Every timer armed so far fires (late, at the clock's time now). */
    fire() {
      const due = [...armed.values()]
      armed.clear()
      for (const callback of due) callback()
    },
  }
}

const slot = (cost: number, rule = 'reports'): Charge => ({
  rule,
  algorithm: concurrency({ limit: LIMIT }),
  key: 'ip:203.0.113.7',
  cost,
  shadow: false,
})

describe.skipIf(!redisAvailable)('expired concurrency leases, each counted once', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
    const scripts = redisStore({ client: target.client }).scripts()
    for (const { source } of scripts) await target.command(undefined, ['SCRIPT', 'LOAD', source])
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  /** Processes sharing one key space and one clock; each counts what its store tells, by rule. */
  function world() {
    const clock = manualClock(T0)
    const prefix = uniquePrefix('lease-sweep')
    const process = () => {
      const time = heldTimers()
      const store = redisStore({
        client: target.client,
        prefix,
        time: 'caller',
        timeoutMs: 1_000,
        leaseMs: LEASE_MS,
        // Longer than any test runs: no key expires by its TTL here.
        expiryMarginMs: 600_000,
        clock,
        timers: time.timers,
      })
      const told = new Map<string, number>()
      store.observe((event) => told.set(event.rule, (told.get(event.rule) ?? 0) + event.count))
      return { store, fire: time.fire, told }
    }
    /**
     * Renewals and releases sent so far have been answered and read (a round trip on the same
     * connection, the scripts being loaded already).
     */
    const answered = async () => {
      await target.command(undefined, ['PING'])
      for (let i = 0; i < 20; i++) await Promise.resolve()
    }
    return { clock, process, answered }
  }

  const total = (told: Map<string, number>) => [...told.values()].reduce((a, b) => a + b, 0)

  it('counts the slots of a process that died at the next load after their lease, by rule, once', async () => {
    const { clock, process, answered } = world()
    const dead = process()
    const rules: RuleConfig[] = [
      { id: 'reports', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 3, cost: 2 },
      { id: 'uploads', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 3 },
    ]
    const request = { method: 'GET', path: '/report', identities: { ip: '203.0.113.7' } }
    const limiter = (store: RedisStore, meterProvider?: unknown) =>
      observedLimiter({
        rules,
        store,
        clock,
        logger: false,
        observers: meterProvider ? [tollgateMetrics({ meterProvider } as never)] : [],
      })
    expect(((await limiter(dead.store).decide(request)) as Verdict).allowed).toBe(true)
    // It dies holding 2 + 1 units: its timers never fire, it never releases.
    const sdk = inMemoryMetrics()
    const next = process()
    const survivor = limiter(next.store, sdk.meterProvider)
    clock.advance(LEASE_MS - 1)
    await survivor.decide(request)
    await answered()
    expect(linesOf((await sdk.collect()).get(I.leasesExpired), [A.rule])).toEqual([])
    clock.advance(1)
    const verdict = (await survivor.decide(request)) as Verdict
    await answered()
    expect(linesOf((await sdk.collect()).get(I.leasesExpired), [A.rule])).toEqual([
      'reports = 2',
      'uploads = 1',
    ])
    await survivor.release!(verdict)
    clock.advance(LEASE_MS)
    await survivor.decide(request)
    await answered()
    expect(linesOf((await sdk.collect()).get(I.leasesExpired), [A.rule])).toEqual([
      'reports = 2',
      'uploads = 1',
    ])
    expect(dead.told.size).toBe(0)
    await sdk.shutdown()
  })

  it('counts a stalled holder’s lease once when another’s load swept it, not again at its renewal', async () => {
    const { clock, process, answered } = world()
    const [stalled, other] = [process(), process()]
    const taken = await stalled.store.consume([slot(2)], clock.now())
    clock.advance(LEASE_MS)
    await other.store.consume([slot(1)], clock.now())
    await answered()
    expect(other.told).toEqual(new Map([['reports', 2]]))
    stalled.fire()
    await answered()
    await stalled.store.refund([slot(2)], taken.at, clock.now())
    await answered()
    expect(stalled.told.size).toBe(0)
    expect(stalled.store.leases).toEqual({ held: 0, lost: 1 })
  })

  it('counts a stalled holder’s lease once at its renewal when no load swept it, and no load counts it again', async () => {
    const { clock, process, answered } = world()
    const [stalled, other] = [process(), process()]
    await stalled.store.consume([slot(3)], clock.now())
    clock.advance(LEASE_MS)
    stalled.fire()
    await answered()
    expect(stalled.told).toEqual(new Map([['reports', 3]]))
    const outcome = await other.store.consume([slot(4)], clock.now())
    await answered()
    // Its units were gone already: the whole limit is free, and nothing more is counted.
    expect(outcome.decisions[0]!.allowed).toBe(true)
    expect(other.told.size).toBe(0)
    expect(stalled.store.leases).toEqual({ held: 0, lost: 1 })
  })

  it('never counts a lease released in time, renewed or not', async () => {
    const { clock, process, answered } = world()
    const [holder, unrenewed, other] = [process(), process(), process()]
    const quick = await holder.store.consume([slot(1)], clock.now())
    const long = await holder.store.consume([slot(2)], clock.now())
    const late = await unrenewed.store.consume([slot(1)], clock.now())
    clock.advance(EVERY - 1)
    await holder.store.refund([slot(1)], quick.at, clock.now())
    // Never renewed by a tick: renewed by its release, a moment before its end.
    clock.advance(LEASE_MS - EVERY)
    await unrenewed.store.refund([slot(1)], late.at, clock.now())
    // Renewed every third of the lease for three lease times, then released.
    for (let i = 0; i < 9; i++) {
      holder.fire()
      await answered()
      clock.advance(EVERY)
    }
    await holder.store.refund([slot(2)], long.at, clock.now())
    clock.advance(2 * LEASE_MS)
    await other.store.consume([slot(1)], clock.now())
    await answered()
    expect([holder, unrenewed, other].map((p) => total(p.told))).toEqual([0, 0, 0])
    expect([holder.store.leases, unrenewed.store.leases]).toEqual([
      { held: 0, lost: 0 },
      { held: 0, lost: 0 },
    ])
  })

  it('counts every unit whose lease ended while held exactly once, over any run of processes', async () => {
    const PROCESSES = 3
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('take' as const),
        p: fc.nat(PROCESSES - 1),
        cost: fc.integer({ min: 1, max: 2 }),
      }),
      fc.record({ kind: fc.constant('release' as const), p: fc.nat(PROCESSES - 1), i: fc.nat() }),
      fc.record({ kind: fc.constant('stall' as const), p: fc.nat(PROCESSES - 1) }),
      fc.record({ kind: fc.constant('wake' as const), p: fc.nat(PROCESSES - 1) }),
      fc.record({ kind: fc.constant('die' as const), p: fc.nat(PROCESSES - 1) }),
      fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.oneof(fc.constantFrom(1, EVERY - 1, EVERY), fc.integer({ min: 0, max: EVERY })),
      }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const { clock, process, answered } = world()
        const model = exactModel(clock)
        const processes = Array.from({ length: PROCESSES }, () => ({
          ...process(),
          state: 'running' as 'running' | 'stalled' | 'dead',
          /** The model's leases this process holds, with what its release names them by. */
          holds: [] as Array<{ lease: ModelLease; at: number; cost: number }>,
        }))
        const counted = () => processes.reduce((sum, p) => sum + total(p.told), 0)
        const fire = (p: (typeof processes)[number]) => {
          p.fire()
          model.tick(p.holds.map((held) => held.lease))
          p.holds = p.holds.filter((held) => model.booked(held.lease))
        }
        for (const s of steps) {
          if (s.kind === 'advance') {
            clock.advance(s.ms)
            for (const p of processes) if (p.state === 'running') fire(p)
          } else {
            const p = processes[s.p]!
            if (s.kind === 'die') p.state = 'dead'
            else if (s.kind === 'stall' && p.state === 'running') p.state = 'stalled'
            else if (s.kind === 'wake' && p.state === 'stalled') {
              p.state = 'running'
              fire(p)
            } else if (s.kind === 'take' && p.state === 'running') {
              const outcome = await p.store.consume([slot(s.cost)], clock.now())
              const lease = model.take(s.cost)
              expect(outcome.decisions[0]!.allowed).toBe(lease !== undefined)
              if (lease) p.holds.push({ lease, at: outcome.at, cost: s.cost })
            } else if (s.kind === 'release' && p.state === 'running' && p.holds.length > 0) {
              const [held] = p.holds.splice(s.i % p.holds.length, 1)
              await p.store.refund([slot(held!.cost)], held!.at, clock.now())
              model.release(held!.lease)
            }
          }
          await answered()
          expect(counted()).toBe(model.counted())
        }
        // Every lease ends unrenewed, and a new process's load sweeps what is left.
        clock.advance(LEASE_MS)
        const last = process()
        await last.store.consume([slot(1)], clock.now())
        const lastLease = model.take(1)
        await answered()
        expect(counted() + total(last.told)).toBe(model.counted())
        // Every unit taken was released in time, or counted once.
        expect(counted() + total(last.told)).toBe(model.notReleased() - (lastLease?.cost ?? 0))
      }),
      { numRuns: 40 },
    )
  })
})

type ModelLease = {
  readonly cost: number
  /** When it ends, as Redis holds it. */
  end: number
  /** Its members are in the set. */
  present: boolean
  /** In its holder's book (renewed by its ticks; its release gives it back). */
  booked: boolean
  renewedAt: number
}

/**
 * What Redis and the holders' books hold, and the units counted: a load removes (and counts)
 * every unit whose end has come; a renewal extends a lease not yet ended, or removes and counts
 * it if it ended and is still there; a release renews first when its renewal is due.
 */
function exactModel(clock: ManualClock) {
  const leases: ModelLease[] = []
  let counted = 0
  let released = 0
  const sweep = () => {
    for (const lease of leases) {
      if (lease.present && lease.end <= clock.now()) {
        lease.present = false
        counted += lease.cost
      }
    }
  }
  const renew = (lease: ModelLease) => {
    const now = clock.now()
    lease.renewedAt = now
    if (lease.end > now) {
      lease.end = now + LEASE_MS
      return
    }
    lease.booked = false
    if (lease.present) {
      lease.present = false
      counted += lease.cost
    }
  }
  return {
    counted: () => counted,
    /** Units taken, less those released before their lease ended. */
    notReleased: () => leases.reduce((sum, l) => sum + l.cost, 0) - released,
    booked: (lease: ModelLease) => lease.booked,
    take(cost: number): ModelLease | undefined {
      sweep()
      const held = leases.reduce((sum, l) => sum + (l.present ? l.cost : 0), 0)
      if (held + cost > LIMIT) return undefined
      const now = clock.now()
      const lease = { cost, end: now + LEASE_MS, present: true, booked: true, renewedAt: now }
      leases.push(lease)
      return lease
    },
    tick(held: readonly ModelLease[]) {
      for (const lease of held) if (clock.now() - lease.renewedAt >= EVERY) renew(lease)
    },
    release(lease: ModelLease) {
      if (!lease.booked) return
      lease.booked = false
      // Renewed within a third of its time otherwise: not ended.
      if (clock.now() - lease.renewedAt >= EVERY) renew(lease)
      sweep()
      if (lease.present) released += lease.cost
      lease.present = false
    },
  }
}
