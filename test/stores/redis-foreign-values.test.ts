// Keys that hold what Tollgate did not write there (another type, text, a state of another
// algorithm: a rule that changed algorithm, or a name shared with something else): a request
// decides as if the key were missing and writes its own state over it, in both layouts, for one
// request alone and for a batch. The rule-set scripts read such a value through each
// algorithm's own length or number check, with no type test of their own.
import { fixedWindow, gcra, leakyBucket, slidingWindow, tokenBucket } from '@tollgate/core'
import type { Algorithm, Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

const rate = { rate: 10, periodMs: 1_000, burst: 20 }
const RULE_SETS: ReadonlyArray<readonly [string, readonly Algorithm[]]> = [
  ['gcra', [gcra(rate)]],
  ['token bucket', [tokenBucket(rate)]],
  ['fixed window', [fixedWindow({ limit: 5, windowMs: 60_000 })]],
  ['sliding window', [slidingWindow({ limit: 5, windowMs: 60_000 })]],
  ['three rules', [gcra(rate), tokenBucket(rate), slidingWindow({ limit: 5, windowMs: 60_000 })]],
]

/** What a key may hold before Tollgate's first write: another type, or text of other bytes. */
const FOREIGN: ReadonlyArray<readonly [string, (redis: Redis, key: string) => Promise<unknown>]> = [
  ['a list', (redis, key) => redis.rpush(key, 'a', 'b')],
  ['a hash', (redis, key) => redis.hset(key, 'f', 'v')],
  ['a set', (redis, key) => redis.sadd(key, 'm')],
  ['text', (redis, key) => redis.set(key, 'hello')],
  ['a number', (redis, key) => redis.set(key, '12345')],
  // 17 bytes, the length of a two-slot state, with a tag no algorithm has.
  ['a state of no algorithm', (redis, key) => redis.set(key, Buffer.alloc(17, 0x7e))],
]

const NOW = 1_700_000_000_000

describe.skipIf(!redisAvailable)('Redis store over keys it did not write', () => {
  let target: Target
  let raw: Redis
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
    raw = new Redis(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    raw?.disconnect()
    await removeTestKeys()
  })

  const store = (layout: 'rule' | 'identity') =>
    redisStore({
      client: target.client,
      prefix: uniquePrefix(`foreign-${layout}`),
      time: 'caller',
      timeoutMs: 10_000,
      layout,
    })
  const charges = (algorithms: readonly Algorithm[], identity: string): Charge[] =>
    algorithms.map((algorithm, i) => ({
      rule: `r${i}`,
      algorithm,
      key: identity,
      cost: 1,
      shadow: false,
    }))

  for (const layout of ['rule', 'identity'] as const) {
    for (const [setName, algorithms] of RULE_SETS) {
      it(`${layout} layout, ${setName}: decides as a missing key and writes its own state`, async () => {
        const clean = store(layout)
        const foreign = store(layout)
        // Three identities decided together (one batch), then one alone, for each foreign value.
        for (const [what, fill] of FOREIGN) {
          const identities = ['a', 'b', 'c', 'd'].map((id) => `ip:${what}:${id}`)
          for (const identity of identities) {
            for (const c of charges(algorithms, identity)) {
              const key = foreign.keyOf(c.rule, c.key)
              await raw.del(key)
              await fill(raw, key)
            }
          }
          const decide = (s: typeof clean, ids: readonly string[]) =>
            Promise.all(ids.map((identity) => s.consume(charges(algorithms, identity), NOW)))
          const batch = identities.slice(0, 3)
          const lone = identities.slice(3)
          const expected = [...(await decide(clean, batch)), ...(await decide(clean, lone))]
          const got = [...(await decide(foreign, batch)), ...(await decide(foreign, lone))]
          const decisions = (outcomes: typeof got) =>
            outcomes.map((o) => o.decisions.map((d) => [d.allowed, d.remaining, d.resetAfterMs]))
          expect(decisions(got), what).toEqual(decisions(expected))
          expect(decisions(got)[0]![0]![0], what).toBe(true)
          for (const identity of identities) {
            for (const c of charges(algorithms, identity)) {
              expect(await raw.type(foreign.keyOf(c.rule, c.key)), what).toBe('string')
            }
          }
          // And the next request counts on from the state written.
          const next = await decide(foreign, lone)
          const again = await decide(clean, lone)
          expect(decisions(next), what).toEqual(decisions(again))
        }
      })
    }
  }

  // A rule that changed algorithm keeps its id, and so its key or its field in the identity
  // value: the state there is another algorithm's, of the same length, with another tag. Each
  // pair below swaps states of equal length; `extra` leaves a rule the second round does not
  // charge, so that the identity value is read entry by entry instead of in one piece.
  const window = { limit: 5, windowMs: 60_000 }
  const CHANGES: ReadonlyArray<
    readonly [string, readonly Algorithm[], readonly Algorithm[], boolean]
  > = [
    ['token bucket to fixed window', [tokenBucket(rate)], [fixedWindow(window)], false],
    ['fixed window to leaky bucket', [fixedWindow(window)], [leakyBucket(rate)], false],
    [
      'three rules, each to another',
      [tokenBucket(rate), fixedWindow(window), leakyBucket(rate)],
      [fixedWindow(window), leakyBucket(rate), tokenBucket(rate)],
      false,
    ],
    [
      'three rules, each to another, beside a rule not charged',
      [tokenBucket(rate), fixedWindow(window), leakyBucket(rate)],
      [fixedWindow(window), leakyBucket(rate), tokenBucket(rate)],
      true,
    ],
  ]
  for (const layout of ['rule', 'identity'] as const) {
    for (const [change, before, after, extra] of CHANGES) {
      it(`${layout} layout, ${change}: the old state reads as none`, async () => {
        const clean = store(layout)
        const changed = store(layout)
        const identities = ['a', 'b', 'c', 'd'].map((id) => `ip:changed:${id}`)
        const beforeCharges = (identity: string) => {
          const list = charges(before, identity).map((c) => ({ ...c, cost: 3 }))
          if (!extra) return list
          return [
            ...list,
            { rule: 'extra', algorithm: gcra(rate), key: identity, cost: 1, shadow: false },
          ]
        }
        for (const identity of identities) {
          const outcome = await changed.consume(beforeCharges(identity), NOW)
          expect(outcome.decisions.every((d) => d.allowed)).toBe(true)
        }
        // Three identities decided together (one batch), then one alone.
        const decide = (s: typeof clean, ids: readonly string[]) =>
          Promise.all(ids.map((identity) => s.consume(charges(after, identity), NOW + 1)))
        const decisions = (outcomes: Awaited<ReturnType<typeof decide>>) =>
          outcomes.map((o) => o.decisions.map((d) => [d.allowed, d.remaining, d.resetAfterMs]))
        const batch = identities.slice(0, 3)
        const lone = identities.slice(3)
        const expected = [...(await decide(clean, batch)), ...(await decide(clean, lone))]
        const got = [...(await decide(changed, batch)), ...(await decide(changed, lone))]
        expect(decisions(got)).toEqual(decisions(expected))
      })
    }
  }
})
