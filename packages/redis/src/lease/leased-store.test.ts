import { fixedWindow, slidingLog, tokenBucket } from '@tollgate/core'
import {
  type Algorithm,
  type Charge,
  type Outcome,
  RateLimitError,
  type Store,
} from '@tollgate/core/store'
import { manualTime, referenceStore } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import { type LeasedStoreOptions, leasedStore } from './leased-store.js'

const START = 1_800_000_000_000

/** The reference store behind promises, counting calls, failing on demand. */
function sharedStore() {
  const inner = referenceStore()
  const state = { calls: 0, refunds: 0, failing: false }
  const store: Store = {
    async consume(charges, now): Promise<Outcome> {
      state.calls++
      await Promise.resolve()
      if (state.failing) throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down')
      return inner.consume(charges, now) as Outcome
    },
    async refund(charges, chargedAt, now) {
      state.refunds++
      if (state.failing) throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down')
      await inner.refund(charges, chargedAt, now)
    },
  }
  /** What the shared store has counted of a fixed window's key at `now`. */
  const counted = (charge: Charge, now: number) => {
    const held = inner.states.get(`${charge.rule}\u0000${charge.key}`)
    const windowMs = charge.algorithm.policy.windowMs
    return held !== undefined && held[0] === now - (now % windowMs) ? held[1]! : 0
  }
  return { store, state, counted, states: inner.states }
}

function setup(algorithm: Algorithm, options: Partial<LeasedStoreOptions> = {}) {
  const time = manualTime(START)
  const shared = sharedStore()
  const leased = leasedStore(shared.store, {
    rules: [{ id: 'hot', algorithm: algorithm.name }],
    clock: time.clock,
    timers: time.timers,
    ...options,
  })
  const charge: Charge = { rule: 'hot', algorithm, key: 'tenant:7', cost: 1, shadow: false }
  const consume = async (charges: readonly Charge[] = [charge]) =>
    await leased.consume(charges, time.now())
  return { time, shared, leased, charge, consume }
}

const allowed = (outcome: Outcome) => outcome.decisions.every((d) => d.allowed)

describe('leasedStore options', () => {
  const store = referenceStore()
  const rule = { id: 'hot', algorithm: 'fixed_window' }
  it.each([
    [{ rules: [] }, 'leasedStore rules: expected a non-empty array'],
    [
      { rules: [{ id: 'log', algorithm: 'sliding_log' }] },
      "rules[0].algorithm: rule 'log' uses sliding_log, which cannot be leased",
    ],
    [{ rules: [rule, { id: 'q', algorithm: 'leaky_queue' }] }, 'rules[1].algorithm'],
    [{ rules: [{ id: 'c', algorithm: 'concurrency' }] }, 'concurrency, which cannot be leased'],
    [{ rules: [rule], ttlMs: 0 }, 'leasedStore ttlMs: expected a whole number of ms ≥ 1, got 0'],
    [{ rules: [rule], ttlMs: 1.5 }, 'leasedStore ttlMs'],
    [{ rules: [rule], maxShare: 0 }, 'leasedStore maxShare: expected a number in (0, 1], got 0'],
    [{ rules: [rule], maxShare: 1.5 }, 'leasedStore maxShare'],
    [{ rules: [rule], timers: {} }, 'leasedStore timers'],
  ])('refuses %j at start-up, naming the field', (options, message) => {
    expect(() => leasedStore(store, options as never)).toThrow(message)
    try {
      leasedStore(store, options as never)
    } catch (error) {
      expect((error as RateLimitError).code).toBe('ERR_RL_INVALID_OPTION')
    }
  })
})

describe('leasedStore', () => {
  it('decides a hot key locally: 1000 requests, a handful of calls, every unit counted in the shared store', async () => {
    const { consume, shared, leased, charge, time } = setup(
      fixedWindow({ limit: 10_000, windowMs: 60_000 }),
    )
    for (let i = 0; i < 1000; i++) expect(allowed(await consume())).toBe(true)
    // Leases start at nothing and double while spent in time, up to 10 % of the limit.
    expect(shared.state.calls).toBeLessThanOrEqual(20)
    const stats = leased.stats()
    expect(stats.localDecisions).toBe(1000 - shared.state.calls)
    const held = stats.grantedUnits - (1000 - shared.state.calls)
    expect(shared.counted(charge, time.now())).toBe(1000 + held)
  })

  it('passes rules without leases, and shadow charges, straight through', async () => {
    const { leased, shared, time } = setup(fixedWindow({ limit: 10, windowMs: 1000 }))
    const other: Charge = {
      rule: 'cold',
      algorithm: tokenBucket({ rate: 1, burst: 5 }),
      key: 'k',
      cost: 1,
      shadow: false,
    }
    for (let i = 0; i < 5; i++) await leased.consume([other], time.now())
    expect(allowed(await leased.consume([other], time.now()))).toBe(false)
    expect(shared.state.calls).toBe(6)
    expect(leased.stats().grants).toBe(0)
  })

  it('ends a fixed window lease with its window: leftover units are never spent in the next one', async () => {
    const { consume, leased, charge, time, shared } = setup(
      fixedWindow({ limit: 20, windowMs: 1000 }),
      {
        maxShare: 0.5,
        ttlMs: 10_000,
      },
    )
    await time.advance(1000 - (START % 1000) - 10) // 10 ms before a boundary
    for (let i = 0; i < 4; i++) await consume() // leases of 1 then 2: one unit left
    const left = leased.stats().grantedUnits - leased.stats().localDecisions
    expect(left).toBeGreaterThan(0)
    await time.advance(10)
    expect(leased.stats().lapsedUnits).toBe(left)
    // A fresh window: the shared store counts everything this process admits in it.
    let admitted = 0
    for (let i = 0; i < 30; i++) if (allowed(await consume())) admitted++
    expect(admitted).toBe(20)
    expect(shared.counted(charge, time.now())).toBe(20)
  })

  it('gives a fixed window lease that ends before its window back to the shared store', async () => {
    const { consume, leased, charge, time, shared } = setup(
      fixedWindow({ limit: 1000, windowMs: 600_000 }),
      {
        ttlMs: 1000,
      },
    )
    for (let i = 0; i < 50; i++) await consume()
    expect(shared.counted(charge, time.now())).toBeGreaterThan(50)
    await time.advance(1000)
    expect(shared.counted(charge, time.now())).toBe(50)
    expect(leased.stats().returnedUnits).toBe(
      leased.stats().grantedUnits - (50 - shared.state.calls),
    )
  })

  it('lets a rate rule lease lapse after ttlMs: the shared bucket keeps the charge, refill makes it up', async () => {
    const { consume, leased, time } = setup(
      tokenBucket({ rate: 100, periodMs: 1000, burst: 100 }),
      {
        ttlMs: 200,
        maxShare: 0.5,
      },
    )
    for (let i = 0; i < 7; i++) await consume()
    const { grantedUnits, localDecisions } = leased.stats()
    await time.advance(199)
    expect(leased.stats().lapsedUnits).toBe(0)
    await time.advance(1)
    expect(leased.stats().lapsedUnits).toBe(grantedUnits - localDecisions)
    expect(leased.stats().returnedUnits).toBe(0)
  })

  it('returns what it holds on close()', async () => {
    const { consume, leased, charge, time, shared } = setup(
      fixedWindow({ limit: 1000, windowMs: 600_000 }),
    )
    for (let i = 0; i < 40; i++) await consume()
    await leased.close()
    expect(shared.counted(charge, time.now())).toBe(40)
  })

  it('keeps a request of leased and plain rules all or nothing', async () => {
    const { consume, leased, charge, time, shared } = setup(
      fixedWindow({ limit: 1000, windowMs: 600_000 }),
    )
    const plain: Charge = {
      rule: 'strict',
      algorithm: fixedWindow({ limit: 3, windowMs: 600_000 }),
      key: 'user:1',
      cost: 1,
      shadow: false,
    }
    for (let i = 0; i < 20; i++) await consume() // a lease with units to spare
    let admitted = 0
    for (let i = 0; i < 6; i++) if (allowed(await consume([charge, plain]))) admitted++
    expect(admitted).toBe(3)
    // The three denied requests took nothing, from the lease or the shared store: once the lease
    // is given back, the shared count is exactly the admitted requests.
    for (let i = 0; i < 17; i++) await consume()
    expect(shared.counted(plain, time.now())).toBe(3)
    await leased.close()
    expect(shared.counted(charge, time.now())).toBe(20 + 3 + 17)
  })

  it('takes what is left when a lease on top is too much, so leasing never denies what the store would admit', async () => {
    const { consume, time, charge, shared } = setup(fixedWindow({ limit: 30, windowMs: 600_000 }), {
      maxShare: 1,
    })
    let admitted = 0
    for (let i = 0; i < 40; i++) if (allowed(await consume())) admitted++
    expect(admitted).toBe(30)
    expect(shared.counted(charge, time.now())).toBe(30)
  })

  it('fails like the store when it fails, keeps deciding from its lease meanwhile, and loses no unit', async () => {
    const { consume, leased, charge, time, shared } = setup(
      fixedWindow({ limit: 1000, windowMs: 600_000 }),
    )
    for (let i = 0; i < 30; i++) await consume()
    shared.state.failing = true
    let local = 0
    let failed = 0
    for (let i = 0; i < 40; i++) {
      try {
        await consume()
        local++
      } catch (error) {
        expect((error as RateLimitError).code).toBe('ERR_RL_STORE_UNAVAILABLE')
        failed++
      }
    }
    expect(local).toBeGreaterThan(0)
    expect(failed).toBeGreaterThan(0)
    shared.state.failing = false
    await leased.close()
    expect(shared.counted(charge, time.now())).toBe(30 + local)
  })

  it('asks for one lease at a time: 64 requests at once make few calls', async () => {
    const { leased, charge, time, shared } = setup(
      fixedWindow({ limit: 100_000, windowMs: 600_000 }),
    )
    for (let i = 0; i < 8; i++) await leased.consume([charge], time.now())
    const calls = shared.state.calls
    const outcomes = await Promise.all(
      Array.from({ length: 64 }, () => leased.consume([charge], time.now())),
    )
    expect(outcomes.every(allowed)).toBe(true)
    expect(shared.state.calls - calls).toBeLessThanOrEqual(8)
    await leased.close()
    expect(shared.counted(charge, time.now())).toBe(72)
  })

  it('leaves a rule listed with another algorithm alone at request time', async () => {
    const { leased, time, shared } = setup(fixedWindow({ limit: 10, windowMs: 1000 }))
    const changed: Charge = {
      rule: 'hot',
      algorithm: slidingLog({ limit: 5, windowMs: 1000 }),
      key: 'k',
      cost: 1,
      shadow: false,
    }
    for (let i = 0; i < 6; i++) await leased.consume([changed], time.now())
    expect(shared.state.calls).toBe(6)
  })
})
