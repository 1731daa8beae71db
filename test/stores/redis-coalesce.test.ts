// A request goes to Redis at once when nothing of its rule set is on its way; those made behind
// it in the same turn of the event loop go together, one script call per rule set: each must
// still be decided exactly as if it had been sent alone, in order.
import { fixedWindow, gcra } from '@tollgate/core'
import type { Charge, Decision, Outcome } from '@tollgate/core/store'
import { ioredisClient, type RedisScriptClient, redisStore } from '@tollgate/redis'
import { referenceStore } from '@tollgate/test-utils'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { redisOfTheFile, redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, nodeRedisTarget, type Target } from './support/targets.js'
import { algorithmArb, normalise, withinLimits } from './support/trace.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 60_000 })

/** The client, counting the script calls that reach it. */
function counted(client: RedisScriptClient) {
  const counter = { calls: 0, keys: [] as number[] }
  const wrapped: RedisScriptClient = {
    evalsha: (sha, keys, args) => {
      counter.calls++
      counter.keys.push(keys.length)
      return client.evalsha(sha, keys, args)
    },
    eval: (source, keys, args) => client.eval(source, keys, args),
  }
  return { counter, client: wrapped }
}

const charge = (rule: string, algorithm: Charge['algorithm'], key: string): Charge => ({
  rule,
  algorithm,
  key,
  cost: 1,
  shadow: false,
})

/** A store on the test's clock, where nothing expires while a trace runs. */
const onTheCallersClock = (
  client: RedisScriptClient,
  name: string,
  layout: 'rule' | 'identity' = 'rule',
) =>
  // A shared, loaded Redis may take longer than the default 250 ms budget to answer.
  redisStore({
    client,
    time: 'caller',
    prefix: uniquePrefix(name),
    expiryMarginMs: 600_000,
    timeoutMs: 10_000,
    layout,
  })

/** Bursts of one-rule requests, all made at once, on 1–3 rules and a few keys. */
/**
 * Sends each burst's requests at once to `store` and one after another to the reference store,
 * each decided alike at the burst's time; `checkCalls` gets each burst's requests and the calls
 * `store` made for them.
 */
async function matchesReference(
  bursts: readonly { readonly dt: number; readonly requests: readonly Charge[] }[],
  store: { consume(charges: readonly Charge[], now: number): Promise<Outcome> },
  counter: { readonly calls: number },
  checkCalls: (requests: readonly Charge[], calls: number) => void,
): Promise<void> {
  const reference = referenceStore()
  let now = 1_800_000_000_000
  for (const { dt, requests } of bursts) {
    now += dt
    const expected: (readonly Decision[])[] = []
    for (const request of requests) {
      expected.push((await reference.consume([request], now)).decisions)
    }
    const before = counter.calls
    const outcomes = await Promise.all(requests.map((request) => store.consume([request], now)))
    outcomes.forEach((outcome, i) => {
      expect(normalise(outcome.decisions), `request ${i}`).toEqual(normalise(expected[i]!))
      expect(outcome.at).toBe(now)
    })
    checkCalls(requests, counter.calls - before)
  }
}

const burstsArb = fc.array(algorithmArb, { minLength: 1, maxLength: 3 }).chain((algorithms) =>
  fc.array(
    fc.record({
      dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2000 })),
      requests: fc.array(
        fc
          .record({
            rule: fc.integer({ min: 0, max: algorithms.length - 1 }),
            key: fc.constantFrom('ip:203.0.113.7', 'ip:198.51.100.1', 'api_key:k_1'),
            cost: fc.integer({ min: 0, max: 2 }),
          })
          .map(({ rule, key, cost }) => ({
            ...charge(`rule-${rule}`, algorithms[rule]!, key),
            cost: Math.min(cost, algorithms[rule]!.limit),
          })),
        { minLength: 1, maxLength: 12 },
      ),
    }),
    { minLength: 1, maxLength: 8 },
  ),
)

/**
 * Bursts of requests that each charge one to three of three rules (one of them shadow), on a
 * few identities: rules shared between sets, so one key is charged through several scripts.
 * Sometimes a request charges one rule twice. At most 10 requests a burst, so no batch fills.
 */
const ruleSetBurstsArb = fc
  .array(algorithmArb, { minLength: 3, maxLength: 3 })
  .chain((algorithms) => {
    const rule = (i: number, key: string, cost: number): Charge => ({
      ...charge(`rule-${i}`, algorithms[i]!, key),
      cost: Math.min(cost, algorithms[i]!.limit),
      shadow: i === 2,
    })
    const requestArb = fc
      .record({
        rules: fc.oneof(
          { weight: 4, arbitrary: fc.subarray([0, 1, 2], { minLength: 1 }) },
          { weight: 1, arbitrary: fc.constant<number[]>([0, 0]) },
        ),
        key: fc.constantFrom('ip:203.0.113.7', 'ip:198.51.100.1'),
        cost: fc.integer({ min: 0, max: 2 }),
      })
      .map(({ rules, key, cost }) => withinLimits(rules.map((i) => rule(i, key, cost))))
    return fc.array(
      fc.record({
        dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2000 })),
        requests: fc.array(requestArb, { minLength: 1, maxLength: 10 }),
      }),
      { minLength: 1, maxLength: 8 },
    )
  })

/** A calendar window's charge: decided by the general script, never batched. */
function isCalendar(charge: Charge): boolean {
  const params = charge.algorithm.params
  return params?.kind === 'window' && params.calendar !== undefined
}

// Thousands of rule sets, each with scripts of its own: on a Redis of the file's own.
const redisUrl = redisOfTheFile()

// Both layouts: a key per rule, and one value per identity (on one client).
describe.skipIf(!redisServerBinary).each([
  ['ioredis', 'rule', ioredisTarget],
  ['node-redis', 'rule', nodeRedisTarget],
  ['ioredis', 'identity', ioredisTarget],
] as const)('Redis store, requests made together (%s, layout %s)', (_name, layout, connect) => {
  let target: Target
  beforeAll(async () => {
    target = await connect(redisUrl())
  })
  afterAll(async () => {
    await target?.close()
  })

  it('decides each request of a burst exactly as the reference store does one after another, in one call per rule', async () => {
    await fc.assert(
      fc.asyncProperty(burstsArb, async (bursts) => {
        const { counter, client } = counted(target.client)
        const store = onTheCallersClock(client, 'burst', layout)
        await matchesReference(bursts, store, counter, (requests, made) => {
          // Per rule: the first request alone, the others behind it in one batch; a calendar
          // window's request goes alone through the general script, which takes its window's
          // boundaries (they change from window to window, so no script is made for them).
          const perRule = new Map<string, number>()
          for (const r of requests) perRule.set(r.rule, (perRule.get(r.rule) ?? 0) + 1)
          const expected = [...perRule].reduce((sum, [rule, n]) => {
            const calendar = requests.some((r) => r.rule === rule && isCalendar(r))
            return sum + (calendar ? n : Math.min(n, 2))
          }, 0)
          expect(made).toBe(expected)
        })
      }),
      { numRuns: 60 },
    )
  })

  it('decides bursts of multi-rule requests as the reference store does, each rule set in order, in one call per rule set', async () => {
    await fc.assert(
      fc.asyncProperty(ruleSetBurstsArb, async (bursts) => {
        const { counter, client } = counted(target.client)
        const store = onTheCallersClock(client, 'sets', layout)
        const reference = referenceStore()
        let now = 1_800_000_000_000
        for (const { dt, requests } of bursts) {
          now += dt
          // Calls leave in this order: as the requests come, a request that charges one key
          // twice or a calendar window (general script) and the first of each rule set, alone; then one batch per
          // rule set of the requests behind its first, in the order the batches began. A
          // script is made for its rules' algorithms, parameters and shadow flags: rules that
          // are alike share one.
          const batches = new Map<string, number[]>()
          const first = new Set<string>()
          const atOnce: number[] = []
          requests.forEach((request, i) => {
            const keys = request.map((c) => `${c.rule}:${c.key}`)
            if (new Set(keys).size < keys.length || request.some(isCalendar)) {
              atOnce.push(i)
              return
            }
            const set = JSON.stringify(
              request.map((c) => [
                c.algorithm.name,
                c.algorithm.params,
                request.length > 1 && c.shadow,
              ]),
            )
            if (!first.has(set)) {
              first.add(set)
              atOnce.push(i)
            } else batches.set(set, [...(batches.get(set) ?? []), i])
          })
          const expected = new Map<number, readonly Decision[]>()
          for (const i of [...atOnce, ...[...batches.values()].flat()]) {
            expected.set(i, (await reference.consume(requests[i]!, now)).decisions)
          }
          // A script's first call goes out again as EVAL after NOSCRIPT, behind calls sent after
          // it: load each script first (the one-request and the batch script: three requests
          // at once), on keys of their own.
          for (const request of requests) {
            const warmUp = request.map((c) => ({ ...c, key: 'warm-up' }))
            await Promise.all([1, 2, 3].map(() => store.consume(warmUp, now)))
          }
          const before = counter.calls
          const outcomes = await Promise.all(requests.map((request) => store.consume(request, now)))
          outcomes.forEach((outcome, i) => {
            expect(normalise(outcome.decisions), `request ${i}`).toEqual(
              normalise(expected.get(i)!),
            )
            expect(outcome.at).toBe(now)
          })
          expect(counter.calls - before).toBe(atOnce.length + batches.size)
        }
      }),
      { numRuns: 60 },
    )
  })

  it('admits exactly the limit from one large burst: the first alone, the rest in calls of at most 32 requests', async () => {
    const { counter, client } = counted(target.client)
    const store = redisStore({ client, prefix: uniquePrefix('large'), timeoutMs: 10_000, layout })
    const window = fixedWindow({ limit: 250, windowMs: 3_600_000 })
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, () => store.consume([charge('big', window, 'k')], 0)),
    )
    expect(outcomes.filter((o) => o.decisions[0]!.allowed)).toHaveLength(250)
    // Admitted first, in order: the first 250 requests, each seeing one less remaining.
    expect(outcomes.slice(0, 250).map((o) => o.decisions[0]!.remaining)).toEqual(
      Array.from({ length: 250 }, (_, i) => 249 - i),
    )
    expect(counter.keys).toEqual([1, ...Array.from({ length: 9 }, () => 32), 11])
    // The server's clock: one TIME per call, shared by its requests.
    expect(new Set(outcomes.slice(1, 33).map((o) => o.at)).size).toBe(1)
  })

  it('admits exactly the tightest limit from a large burst of three-rule requests: the first alone, then as many per call as read 32 keys', async () => {
    const { counter, client } = counted(target.client)
    const store = redisStore({
      client,
      prefix: uniquePrefix('large-set'),
      timeoutMs: 10_000,
      layout,
    })
    const rules = [
      charge('hour', gcra({ rate: 1000, periodMs: 3_600_000, burst: 1000 }), 'k'),
      charge('minute', fixedWindow({ limit: 45, windowMs: 60_000 }), 'k'),
      { ...charge('shadow', fixedWindow({ limit: 5, windowMs: 60_000 }), 'k'), shadow: true },
    ]
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => store.consume(rules, 0)))
    const admitted = outcomes.filter((o) => o.decisions.every((d, i) => d.allowed || i === 2))
    expect(admitted).toHaveLength(45)
    expect(outcomes.slice(0, 45)).toEqual(admitted)
    // The shadow rule denied from the sixth request on, and never stopped one.
    expect(outcomes.map((o) => o.decisions[2]!.allowed).indexOf(false)).toBe(5)
    // Denied requests took nothing: the hourly rule was charged 45 times.
    expect(outcomes[59]!.decisions[0]!.remaining).toBe(1000 - 45)
    // A key per rule: 10 requests (30 keys) a call; in one identity value a request reads and
    // sends one key, the identity's, so 32 requests a call.
    expect(counter.keys).toEqual(layout === 'rule' ? [3, 30, 30, 30, 30, 30, 27] : [1, 32, 27])
  })

  it('sends each request on its own with coalesce: false', async () => {
    const { counter, client } = counted(target.client)
    const store = redisStore({
      client,
      prefix: uniquePrefix('alone'),
      coalesce: false,
      timeoutMs: 10_000,
    })
    const rule = gcra({ rate: 10, periodMs: 1000, burst: 5 })
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => store.consume([charge('alone', rule, 'k')], 0)),
    )
    expect(counter.calls).toBe(8)
    expect(outcomes.filter((o) => o.decisions[0]!.allowed)).toHaveLength(5)
  })
})

describe.skipIf(!redisServerBinary)(
  'Redis store, requests made together (ioredis, auto-pipelining)',
  () => {
    let redis: Redis
    beforeAll(() => {
      redis = new Redis(redisUrl(), { enableAutoPipelining: true })
      redis.on('error', () => {})
    })
    afterAll(async () => {
      redis?.disconnect()
    })

    it("sends the store's calls with the client's key prefix, as ioredis's own commands have it", async () => {
      const keyPrefix = `${uniquePrefix('key-prefix')}:`
      const prefixed = new Redis(redisUrl(), { enableAutoPipelining: true, keyPrefix })
      prefixed.on('error', () => {})
      try {
        const store = redisStore({
          client: ioredisClient(prefixed),
          prefix: 'p',
          timeoutMs: 10_000,
        })
        const rule = gcra({ rate: 10, periodMs: 1000, burst: 5 })
        const outcomes = await Promise.all(
          Array.from({ length: 7 }, () => store.consume([charge('kp', rule, 'k')], 0)),
        )
        expect(outcomes.map((o) => o.decisions[0]!.allowed)).toEqual([
          true,
          true,
          true,
          true,
          true,
          false,
          false,
        ])
        // Read through a client without the prefix: the state lives under it.
        expect(await redis.exists(`${keyPrefix}${store.keyOf('kp', 'k')}`)).toBe(1)
      } finally {
        prefixed.disconnect()
      }
    })

    it('decides each request of a burst exactly as the reference store does, with the adapter as given (each call at once, outside the auto-pipeline)', async () => {
      const direct = ioredisClient(redis)
      // Its calls go around ioredis's auto-pipeline: the store's own batching applies.
      expect(direct.autoPipelining).toBeUndefined()
      await fc.assert(
        fc.asyncProperty(burstsArb, async (bursts) => {
          const { counter, client } = counted(direct)
          const store = onTheCallersClock(client, 'pipelined-direct')
          await matchesReference(bursts, store, counter, (requests, made) => {
            // Per algorithm one request ahead alone and one call for those behind it (at most
            // 32 a call); a calendar window's requests each go alone, through the general script.
            const algorithms = new Map<string, number>()
            let alone = 0
            for (const r of requests) {
              const name = JSON.stringify([r.algorithm.name, r.algorithm.params])
              if (isCalendar(r)) alone++
              else algorithms.set(name, (algorithms.get(name) ?? 0) + 1)
            }
            let most = alone
            for (const count of algorithms.values()) most += 1 + Math.ceil((count - 1) / 32)
            expect(made).toBeLessThanOrEqual(most)
          })
        }),
        { numRuns: 40 },
      )
    })

    it("decides each request of a burst exactly as the reference store does, all of a rule in one call, on a client that holds a tick's commands: none goes ahead alone", async () => {
      const pipelined = ioredisClient(redis)
      await fc.assert(
        fc.asyncProperty(burstsArb, async (bursts) => {
          const { counter, client } = counted(pipelined)
          const store = onTheCallersClock({ ...client, autoPipelining: true }, 'pipelined')
          await matchesReference(bursts, store, counter, (requests, made) => {
            // At most one call per algorithm for the whole burst (rules whose scripts come out
            // alike share one, so fewer is possible; a request sent ahead alone would make two);
            // a calendar window's requests each go alone, through the general script.
            const algorithms = new Set<string>()
            let alone = 0
            for (const r of requests) {
              if (isCalendar(r)) alone++
              else algorithms.add(JSON.stringify([r.algorithm.name, r.algorithm.params]))
            }
            expect(made).toBeLessThanOrEqual(algorithms.size + alone)
          })
        }),
        { numRuns: 40 },
      )
    })
  },
)
