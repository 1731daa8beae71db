// Expired concurrency leases on a real Redis, counted by tollgateMetrics through the SDK's
// in-memory reader: a lease whose holder stalls past its lease time is counted once, whether a
// renewal or its release finds it ended; a lease renewed or released in time never is.
import type { RuleConfig, Timers, Verdict } from '@tollgate/core'
import { observedLimiter } from '@tollgate/core/observe'
import { ATTRIBUTES as A, INSTRUMENTS as I, tollgateMetrics } from '@tollgate/opentelemetry'
import { redisStore } from '@tollgate/redis'
import { manualClock } from '@tollgate/test-utils'
import { inMemoryMetrics, linesOf } from '@tollgate/test-utils/metrics'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

vi.setConfig({ testTimeout: 60_000 })

const LEASE_MS = 3_000
/** The store renews a lease once it has gone this long without. */
const EVERY = LEASE_MS / 3
const T0 = 1_000_000

const RULES: RuleConfig[] = [
  { id: 'reports', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 3 },
]
const request = { method: 'GET', path: '/report', identities: { ip: '203.0.113.7' } }

/** Timers that fire only when the test says: a process whose event loop stalled. */
function stalledTimers() {
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
    /** The stall ends: every timer armed so far fires (late, at the clock's time now). */
    fire() {
      const due = [...armed.values()]
      armed.clear()
      for (const callback of due) callback()
    },
  }
}

describe.skipIf(!redisAvailable)('expired concurrency leases, counted', () => {
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

  function setup() {
    const clock = manualClock(T0)
    const stall = stalledTimers()
    const sdk = inMemoryMetrics()
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('lease-expiry'),
      time: 'caller',
      timeoutMs: 1_000,
      leaseMs: LEASE_MS,
      clock,
      timers: stall.timers,
    })
    const limiter = observedLimiter({
      rules: RULES,
      store,
      clock,
      logger: false,
      observers: [tollgateMetrics({ meterProvider: sdk.meterProvider })],
    })
    /**
     * Renewals and releases sent so far have been answered and read (a round trip on the same
     * connection, the scripts being loaded already: no NOSCRIPT retry comes after it).
     */
    const answered = async () => {
      await target.command(undefined, ['PING'])
      for (let i = 0; i < 20; i++) await Promise.resolve()
    }
    const expired = async () => linesOf((await sdk.collect()).get(I.leasesExpired), [A.rule])
    return { clock, stall, sdk, store, limiter, answered, expired }
  }

  it('counts a lease once when its renewal comes after its end, and not at its release', async () => {
    const { clock, stall, sdk, store, limiter, answered, expired } = setup()
    const stalled = (await limiter.decide(request)) as Verdict
    const quick = (await limiter.decide(request)) as Verdict
    clock.advance(500)
    await limiter.release!(quick)
    clock.advance(LEASE_MS)
    stall.fire()
    await answered()
    expect(await expired()).toEqual(['reports = 1'])
    expect(store.leases).toEqual({ held: 0, lost: 1 })
    // Its release finds nothing of it to give back; later ticks have nothing to renew.
    await limiter.release!(stalled)
    clock.advance(LEASE_MS)
    stall.fire()
    await answered()
    expect(await expired()).toEqual(['reports = 1'])
    await sdk.shutdown()
  })

  it('counts a lease released after its end with no renewal between, once', async () => {
    const { clock, stall, sdk, store, limiter, answered, expired } = setup()
    const verdict = (await limiter.decide(request)) as Verdict
    clock.advance(LEASE_MS)
    await limiter.release!(verdict)
    await answered()
    expect(await expired()).toEqual(['reports = 1'])
    stall.fire()
    await answered()
    expect(await expired()).toEqual(['reports = 1'])
    expect(store.leases).toEqual({ held: 0, lost: 1 })
    await sdk.shutdown()
  })

  it('counts a lease exactly when its end passed before a renewal or its release reached it', async () => {
    const delay = fc.oneof(
      fc.constantFrom(0, EVERY - 1, EVERY, LEASE_MS - 1, LEASE_MS),
      fc.integer({ min: 0, max: 2 * LEASE_MS }),
    )
    await fc.assert(
      fc.asyncProperty(delay, delay, async (stalledFor, heldAfter) => {
        const { clock, stall, sdk, limiter, answered, expired } = setup()
        const verdict = (await limiter.decide(request)) as Verdict
        clock.advance(stalledFor)
        stall.fire()
        await answered()
        clock.advance(heldAfter)
        await limiter.release!(verdict)
        await answered()
        stall.fire()
        await answered()
        // The first renewal falls due a third of the lease in: it finds the lease ended if the
        // stall outlasted the lease; renewed, the lease ends a lease time later. Unrenewed, the
        // release (which renews first once one is due) finds it ended after the lease time.
        const renewed = stalledFor >= EVERY
        const ran = renewed
          ? stalledFor >= LEASE_MS || heldAfter >= LEASE_MS
          : stalledFor + heldAfter >= LEASE_MS
        expect(await expired()).toEqual(ran ? ['reports = 1'] : [])
        await sdk.shutdown()
      }),
      { numRuns: 30 },
    )
  })
})
