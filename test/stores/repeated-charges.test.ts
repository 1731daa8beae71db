// One request that charges one rule and key several times is still all or nothing, in the
// memory store and the Redis store: admitted, it takes the sum; denied, it takes nothing.
import { memoryStore, tokenBucket } from '@tollgate/core'
import type { Algorithm, Charge, Store } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisOfTheFile, redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'
import { algorithmArb, normalise } from './support/trace.js'

const NOW = 1_800_000_000_000
const charge = (algorithm: Algorithm, key: string, cost: number): Charge => ({
  rule: 'r',
  algorithm,
  key,
  cost,
  shadow: false,
})

const caseArb = algorithmArb.chain((algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    used: fc.integer({ min: 0, max: algorithm.limit }),
    charges: fc.array(
      fc.record({
        key: fc.constantFrom('k', 'k', 'j'),
        cost: fc.integer({ min: 0, max: algorithm.limit }),
      }),
      { minLength: 2, maxLength: 4 },
    ),
  }),
)

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

/** What each key has left, at cost 0. */
async function look(store: Store, algorithm: Algorithm) {
  const outcome = await store.consume([charge(algorithm, 'k', 0), charge(algorithm, 'j', 0)], NOW)
  return normalise(outcome.decisions)
}

/** Runs a case on `store`; returns the decisions and what is left before and after. */
async function run(store: Store, { algorithm, used, charges }: Case) {
  await store.consume([charge(algorithm, 'k', used)], NOW)
  const before = await look(store, algorithm)
  const outcome = await store.consume(
    charges.map(({ key, cost }) => charge(algorithm, key, cost)),
    NOW,
  )
  return { decisions: normalise(outcome.decisions), before, after: await look(store, algorithm) }
}

async function expectAllOrNothing(store: () => Store, c: Case) {
  const { decisions, before, after } = await run(store(), c)
  if (decisions.some((d) => !d.allowed)) {
    expect(after).toEqual(before)
    return
  }
  // Admitted: exactly as one charge of the sum on each key.
  const summed = store()
  const totals = new Map<string, number>()
  for (const { key, cost } of c.charges) totals.set(key, (totals.get(key) ?? 0) + cost)
  await summed.consume([charge(c.algorithm, 'k', c.used)], NOW)
  await summed.consume(
    [...totals].map(([key, cost]) => charge(c.algorithm, key, cost)),
    NOW,
  )
  expect(after).toEqual(await look(summed, c.algorithm))
}

describe('charges of one rule and key in one request, in the memory store', () => {
  it('burst 5, charges [3, 3]: denied, and nothing is taken', () => {
    const store = memoryStore()
    const bucket = tokenBucket({ rate: 1, burst: 5 })
    const { decisions } = store.consume([charge(bucket, 'k', 3), charge(bucket, 'k', 3)], NOW)
    expect(decisions.map((d) => d.allowed)).toEqual([true, false])
    expect(store.consume([charge(bucket, 'k', 5)], NOW).decisions[0]!.allowed).toBe(true)
  })

  it('takes the sum when admitted and nothing when denied', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => expectAllOrNothing(() => memoryStore(), c)),
      { numRuns: 1000 },
    )
  })
})

// Hundreds of rule sets, each with scripts of its own: on a Redis of the file's own.
const redisUrl = redisOfTheFile()

describe.skipIf(!redisServerBinary).each(['rule', 'identity'] as const)(
  'charges of one rule and key in one request, in Redis (layout %s)',
  (layout) => {
    let target: Target
    beforeAll(async () => {
      target = await ioredisTarget(redisUrl())
    })
    afterAll(async () => {
      await target?.close()
    })
    const store = () =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('repeat'),
        expiryMarginMs: 600_000,
        timeoutMs: 5000,
        layout,
      })

    it('burst 5, charges [3, 3]: denied, and nothing is taken', async () => {
      const s = store()
      const bucket = tokenBucket({ rate: 1, burst: 5 })
      const { decisions } = await s.consume([charge(bucket, 'k', 3), charge(bucket, 'k', 3)], NOW)
      expect(decisions.map((d) => d.allowed)).toEqual([true, false])
      expect((await s.consume([charge(bucket, 'k', 5)], NOW)).decisions[0]!.allowed).toBe(true)
    })

    it('takes the sum when admitted and nothing when denied, deciding as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          await expectAllOrNothing(store, c)
          expect(await run(store(), c)).toEqual(await run(memoryStore(), c))
        }),
        { numRuns: 200 },
      )
    }, 60_000)
  },
)
