// A cost-0 call inspects: through the memory store and the Redis store it takes nothing and
// writes nothing, whatever the clock reads (a clock that stepped back by any amount included),
// so a trace decides the same with inspections between its requests as without them; and in
// Redis an inspection leaves every key as it was, a fresh client's key absent.
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  memoryStore,
  type Store,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

const YEAR_MS = 365 * 86_400_000
const START = 1_800_000_000_000

const algorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  fc
    .record({
      rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 2048, max: 20_000 })),
      periodMs: fc.constantFrom(7, 1000, 60_000),
      burst: fc.integer({ min: 1, max: 20 }),
    })
    .chain((p) => fc.constantFrom(tokenBucket(p), gcra(p), leakyBucket(p))),
  fc
    .record({
      limit: fc.integer({ min: 1, max: 20 }),
      windowMs: fc.constantFrom(100, 1000, 60_000, 86_400_000),
    })
    .chain((p) =>
      fc.constantFrom(
        fixedWindow(p),
        slidingLog(p),
        slidingWindow(p),
        slidingWindow({ ...p, buckets: 10 }),
        fixedWindow({ limit: p.limit, calendar: 'day', timeZone: 'Europe/Paris' }),
      ),
    ),
)

/** Jumps of every size either way: a few ms, a few windows, hours, up to ten years. */
const jumpArb = fc.oneof(
  fc.integer({ min: 0, max: 50 }),
  fc.integer({ min: -3000, max: 3000 }),
  fc.integer({ min: -200_000_000, max: 200_000_000 }),
  fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }),
)

/**
 * Requests of one rule, or of two (the second rule the same algorithm on its own key), each
 * after inspections at their own jumps from the request's time.
 */
const traceArb = algorithmArb.chain((algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    trace: fc.array(
      fc.record({
        jump: jumpArb,
        costs: fc.array(fc.integer({ min: 1, max: algorithm.limit }), {
          minLength: 1,
          maxLength: 2,
        }),
        inspections: fc.array(jumpArb, { maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 25 },
    ),
  }),
)

type Trace = typeof traceArb extends fc.Arbitrary<infer T> ? T : never

const charges = (algorithm: Algorithm, costs: readonly number[]): Charge[] =>
  costs.map((cost, i) => ({ rule: `r${i + 1}`, algorithm, key: 'k', cost, shadow: false }))

const clamp = (t: number) => Math.max(0, t)

/**
 * Runs `trace` on `plain` without its inspections and on `inspected` with them; every request
 * decides alike. `afterInspection` checks what an inspection left behind.
 */
async function expectInspectionsChangeNothing(
  plain: Store,
  inspected: Store,
  { algorithm, trace }: Trace,
  afterInspection: () => Promise<void> = async () => {},
) {
  let now = START
  for (const { jump, costs, inspections } of trace) {
    now = clamp(now + jump)
    for (const inspection of inspections) {
      const looked = await inspected.consume(
        charges(
          algorithm,
          costs.map(() => 0),
        ),
        clamp(now + inspection),
      )
      expect(looked.decisions.every((d) => d.allowed)).toBe(true)
      await afterInspection()
    }
    const [a, b] = await Promise.all([
      plain.consume(charges(algorithm, costs), now),
      inspected.consume(charges(algorithm, costs), now),
    ])
    expect(b.decisions).toEqual(a.decisions)
  }
}

describe('a cost-0 inspection, in the memory store', () => {
  it('changes no decision of the requests after it', async () => {
    await fc.assert(
      fc.asyncProperty(traceArb, (trace) =>
        expectInspectionsChangeNothing(memoryStore(), memoryStore(), trace),
      ),
      { numRuns: 400 },
    )
  }, 60_000)
})

describe.skipIf(!redisAvailable)('a cost-0 inspection, in the Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  const store = (prefix: string, layout: 'rule' | 'identity') =>
    redisStore({
      client: target.client,
      time: 'caller',
      prefix,
      layout,
      // Nothing may expire on the server's clock while a case runs on its own clock.
      expiryMarginMs: 600_000,
      timeoutMs: 5000,
    })

  /** Every key under `prefix`, with its serialized value. */
  async function snapshot(prefix: string): Promise<Map<string, string>> {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, found] = (await target.command(undefined, [
        'SCAN',
        cursor,
        'MATCH',
        `${prefix}*`,
        'COUNT',
        '1000',
      ])) as [string, string[]]
      cursor = next
      keys.push(...found)
    } while (cursor !== '0')
    const values = new Map<string, string>()
    for (const key of keys.sort()) {
      const dump = (await target.command(key, ['DUMP', key])) as Buffer | string | null
      values.set(key, dump === null ? '' : Buffer.from(dump).toString('hex'))
    }
    return values
  }

  /** Each key's remaining time to live, in ms. */
  async function ttls(keys: Iterable<string>): Promise<Map<string, number>> {
    const found = new Map<string, number>()
    for (const key of keys) found.set(key, Number(await target.command(key, ['PTTL', key])))
    return found
  }

  it.each(['rule', 'identity'] as const)(
    'writes nothing, and changes no later decision (layout %s)',
    async (layout) => {
      await fc.assert(
        fc.asyncProperty(traceArb, async (trace) => {
          const prefix = uniquePrefix('inspect')
          let before = new Map<string, string>()
          let lives = new Map<string, number>()
          const inspected = store(prefix, layout)
          // Read what the requests left before each inspection, then check it is untouched:
          // the same keys and values, and no expiry set again (a time to live only shrinks).
          const wrapped: Store = {
            consume: async (c, now) => {
              if (c.every((charge) => charge.cost === 0)) {
                before = await snapshot(prefix)
                lives = await ttls(before.keys())
              }
              return inspected.consume(c, now)
            },
            refund: (c, at, now) => inspected.refund(c, at, now),
          }
          await expectInspectionsChangeNothing(
            store(uniquePrefix('plain'), layout),
            wrapped,
            trace,
            async () => {
              const after = await snapshot(prefix)
              expect(after).toEqual(before)
              for (const [key, life] of await ttls(after.keys())) {
                expect(life).toBeLessThanOrEqual(lives.get(key)!)
              }
            },
          )
        }),
        { numRuns: 60 },
      )
    },
    120_000,
  )

  // The reproduction (issue 50, item 4): a fixed window wrote the key of a client it had never
  // seen; every algorithm must leave it absent, one rule or several, forward or back in time.
  it.each(['rule', 'identity'] as const)(
    "leaves a fresh client's keys absent, for every algorithm (layout %s)",
    async (layout) => {
      const algorithms: Algorithm[] = [
        tokenBucket({ rate: 10, burst: 20 }),
        gcra({ rate: 10, burst: 20 }),
        leakyBucket({ rate: 10, burst: 20 }),
        fixedWindow({ limit: 5, windowMs: 1000 }),
        fixedWindow({ limit: 5, calendar: 'month', timeZone: 'Europe/Paris' }),
        slidingLog({ limit: 5, windowMs: 1000 }),
        slidingWindow({ limit: 5, windowMs: 1000 }),
        slidingWindow({ limit: 5, windowMs: 1000, buckets: 10 }),
      ]
      for (const algorithm of algorithms) {
        const prefix = uniquePrefix('fresh')
        const inspecting = store(prefix, layout)
        for (const rules of [1, 2]) {
          for (const at of [START, START - 3 * 3_600_000]) {
            const looked = await inspecting.consume(
              charges(
                algorithm,
                Array.from({ length: rules }, () => 0),
              ),
              at,
            )
            expect(looked.decisions.every((d) => d.allowed)).toBe(true)
            expect([...(await snapshot(prefix)).keys()], algorithm.name).toEqual([])
          }
        }
      }
    },
  )
})
