// Concurrency slots in Redis as leases: taken with the request's other rules in one call, given
// back in one, renewed while held, and back after the lease time when nobody renews them.
import { concurrency, createLimiter, fixedWindow, tokenBucket } from '@tollgate/core'
import { type Charge, isRateLimitError } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

vi.setConfig({ testTimeout: 60_000 })

const LEASE_MS = 3_000
const T0 = 1_000_000

const slot = (algorithm = concurrency({ limit: 3 }), cost = 1, key = 'ip:203.0.113.7'): Charge => ({
  rule: 'reports',
  algorithm,
  key,
  cost,
  shadow: false,
})

describe.skipIf(!redisAvailable)('Redis concurrency leases (single node)', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  /**
   * A store on the caller's clock, with manual time driving its renewals. A key per rule: a
   * concurrency rule keeps a key of its own in either layout, and `keyOf` (what `units` reads)
   * names it without knowing the rule's algorithm only in this one.
   */
  function store(prefix: string, time = manualTime(T0)) {
    return redisStore({
      client: target.client,
      prefix,
      layout: 'rule',
      time: 'caller',
      timeoutMs: 1_000,
      leaseMs: LEASE_MS,
      clock: time.clock,
      timers: time.timers,
    })
  }
  const units = (prefix: string, charge: Charge) =>
    target.command(undefined, ['ZCARD', store(prefix).keyOf(charge.rule, charge.key)])

  it('holds at most the limit for any sequence of takes and releases, each release exact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ take: fc.boolean(), cost: fc.integer({ min: 0, max: 3 }) }), {
          minLength: 1,
          maxLength: 25,
        }),
        async (limit, steps) => {
          const prefix = uniquePrefix('conc-model')
          const redis = store(prefix)
          const algorithm = concurrency({ limit, retryAfterMs: 500 })
          const held: { at: number; charge: Charge }[] = []
          let units = 0
          for (const step of steps) {
            if (step.take || held.length === 0) {
              const charge = slot(algorithm, Math.min(step.cost, limit))
              const outcome = await redis.consume([charge], T0)
              const fits = units + charge.cost <= limit || charge.cost === 0
              expect(outcome.decisions[0]).toMatchObject({ allowed: fits })
              if (!fits) expect(outcome.decisions[0]!.retryAfterMs).toBe(500)
              if (fits && charge.cost > 0) {
                held.push({ at: outcome.at, charge })
                units += charge.cost
              }
            } else {
              const { at, charge } = held.shift()!
              await redis.refund([charge], at, T0)
              units -= charge.cost
            }
            expect(
              await target.command(undefined, ['ZCARD', redis.keyOf('reports', slot().key)]),
            ).toBe(units)
            expect(redis.leases.held).toBe(held.length)
          }
        },
      ),
      { numRuns: 25 },
    )
  })

  it('takes no lease for a request another rule denies, in the same call', async () => {
    const prefix = uniquePrefix('conc-all-or-nothing')
    const redis = store(prefix)
    const once = { ...slot(fixedWindow({ limit: 1, windowMs: 60_000 })), rule: 'once' }
    expect((await redis.consume([slot(), once], T0)).decisions.map((d) => d.allowed)).toEqual([
      true,
      true,
    ])
    const denied = await redis.consume([slot(), once], T0)
    expect(denied.decisions.map((d) => d.allowed)).toEqual([true, false])
    expect(await units(prefix, slot())).toBe(1)
    expect(redis.leases.held).toBe(1)
  })

  it("gives a dead process's slots back after the lease time, not before", async () => {
    const prefix = uniquePrefix('conc-expiry')
    const dead = store(prefix)
    for (let i = 0; i < 3; i++) await dead.consume([slot()], T0)
    // The process is gone: its store renews nothing. Another one sees the slots taken…
    const other = store(prefix)
    expect((await other.consume([slot()], T0 + LEASE_MS - 1)).decisions[0]!.allowed).toBe(false)
    // … until their lease ends.
    const after = await other.consume([slot(algorithmOf(3), 3)], T0 + LEASE_MS)
    expect(after.decisions[0]).toMatchObject({ allowed: true, remaining: 0 })
  })

  it('renews the leases of a request that lasts, and stops once it is released', async () => {
    const prefix = uniquePrefix('conc-renew')
    const time = manualTime(T0)
    const holder = store(prefix, time)
    const other = store(prefix)
    const taken = await holder.consume([slot(algorithmOf(1))], T0)
    // Each third of the lease time the holder's timer renews it: it outlives its first term.
    for (let elapsed = 0; elapsed < 4 * LEASE_MS; elapsed += 500) {
      await time.advance(500)
      // A round trip on the same connection: the renewals sent meanwhile have been applied.
      await target.command(undefined, ['PING'])
    }
    const held = await other.consume([slot(algorithmOf(1))], time.now())
    expect(held.decisions[0]!.allowed).toBe(false)
    expect(holder.leases).toEqual({ held: 1, lost: 0 })
    await holder.refund([slot(algorithmOf(1))], taken.at, time.now())
    expect(holder.leases.held).toBe(0)
    await time.advance(LEASE_MS)
    expect(time.pending()).toBe(0)
    expect((await other.consume([slot(algorithmOf(1))], time.now())).decisions[0]!.allowed).toBe(
      true,
    )
  })

  it('refuses a lease time shorter than three store timeouts, naming the option', () => {
    for (const leaseMs of [0, 100, 749, 1.5, Number.NaN, 86_400_001]) {
      try {
        redisStore({ client: target.client, leaseMs })
        expect.unreachable(`leaseMs ${leaseMs} was accepted`)
      } catch (error) {
        expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
        expect((error as Error).message).toContain('redisStore leaseMs')
        expect((error as { field?: string }).field).toBe('leaseMs')
      }
    }
    expect(() => redisStore({ client: target.client, leaseMs: 750 })).not.toThrow()
  })

  it('refuses a request that charges one rule and key with two algorithms, as the core does', async () => {
    const redis = store(uniquePrefix('conc-two-algorithms'))
    const twice = [
      { ...slot(tokenBucket({ rate: 10, burst: 5 })), rule: 'r' },
      { ...slot(fixedWindow({ limit: 5, windowMs: 1000 })), rule: 'r' },
    ]
    await expect(redis.consume(twice, T0)).rejects.toMatchObject({
      code: 'ERR_RL_INVALID_RULE',
      rule: 'r',
      field: 'algorithm',
    })
  })

  it('releases through the limiter once the response ends, whatever the refund policy', async () => {
    const prefix = uniquePrefix('conc-limiter')
    const time = manualTime(T0)
    const limiter = createLimiter({
      store: store(prefix, time),
      clock: time.clock,
      rules: [{ id: 'reports', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 2 }],
      logger: false,
    })
    const facts = { method: 'GET', path: '/report', identities: { ip: '203.0.113.7' } }
    const first = await limiter.decide(facts)
    const second = await limiter.decide(facts)
    expect((await limiter.decide(facts)).allowed).toBe(false)
    await limiter.release!(first)
    await limiter.release!(first)
    expect(await units(prefix, slot())).toBe(1)
    expect((await limiter.decide(facts)).allowed).toBe(true)
    await limiter.release!(second)
  })

  it('a request waiting for a slot takes one another process gave back when its line next looks', async () => {
    const prefix = uniquePrefix('conc-wait')
    const time = manualTime(T0)
    const rules = [
      {
        id: 'reports',
        match: { identity: 'ip' },
        algorithm: 'concurrency',
        limit: 1,
        queue: 1,
        maxWait: '10s',
      },
    ] as const
    // Two gateways on one Redis: a release by one wakes nobody in the other.
    const gateway = () =>
      createLimiter({
        store: store(prefix, time),
        clock: time.clock,
        timers: time.timers,
        rules: [...rules],
        logger: false,
      })
    const [here, there] = [gateway(), gateway()]
    const facts = { method: 'GET', path: '/report', identities: { ip: '203.0.113.7' } }
    const holder = await there.decide(facts)
    const refused = await here.decide(facts)
    expect([holder.allowed, refused.waitsForSlot]).toEqual([true, true])
    let served = false
    const waiting = here.hold(refused).then((verdict) => {
      served = true
      return verdict
    })
    await there.release!(holder)
    await time.advance(999)
    expect(served).toBe(false)
    await time.advance(1)
    const verdict = await waiting
    expect(verdict.allowed).toBe(true)
    expect(await units(prefix, slot())).toBe(1)
    await here.release!(verdict)
    expect(await units(prefix, slot())).toBe(0)
  })
})

function algorithmOf(limit: number) {
  return concurrency({ limit })
}
