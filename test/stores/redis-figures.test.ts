// Per-client figures on one Redis server through limiters: processes (a store and a connection
// each) that hold different figures for one client share its key, each carrying it into its
// own; a refund, an operator's peek and reset find the key under whichever figures wrote it.
import {
  type CarryStrategy,
  createLimiter,
  type Limiter,
  limiterOperations,
  type RuleConfig,
  type Verdict,
} from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'

const NOW = 1_800_000_000_000
const facts = { method: 'GET', path: '/', identities: { api_key: 'k' } }

/** Each request's [allowed, remaining] at NOW (time stands still: nothing refills). */
async function ask(limiter: Limiter, times = 1): Promise<[boolean, number][]> {
  const seen: [boolean, number][] = []
  for (let i = 0; i < times; i++) {
    const verdict = (await limiter.decide(facts, { now: NOW })) as Verdict
    const d = verdict.decisions[0]!
    seen.push([d.allowed, d.remaining])
  }
  return seen
}

const last = async (limiter: Limiter, times = 1) => (await ask(limiter, times)).at(-1)

describe.skipIf(!redisAvailable).each(['rule', 'identity'] as const)(
  'per-client figures on one Redis, layout %s',
  (layout) => {
    const connections: Redis[] = []
    afterAll(async () => {
      for (const redis of connections) redis.disconnect()
      await removeTestKeys()
    })

    /**
     * A process whose lookup gives the client a burst of `burst` (a token bucket of 1 an hour,
     * its own burst 10), on a connection of its own, sharing `prefix` with the others.
     */
    const process = (prefix: string, burst: number, onChange: CarryStrategy): Limiter => {
      const redis = new Redis(REDIS_URL)
      connections.push(redis)
      const store = redisStore({ client: ioredisClient(redis), time: 'caller', prefix, layout })
      return createLimiter({
        rules: [
          {
            id: 'api',
            match: { identity: 'api_key' },
            algorithm: 'token_bucket',
            rate: 1,
            period: '1h',
            burst: 10,
            onChange,
          },
        ],
        store,
        figures: { api: { of: () => ({ burst }) } },
        logger: false,
      })
    }

    it('keep: processes with different figures count the same units used, each against its own burst', async () => {
      const prefix = uniquePrefix('figures')
      const low = process(prefix, 10, 'keep')
      const high = process(prefix, 20, 'keep')
      expect(await ask(low, 4)).toEqual([
        [true, 9],
        [true, 8],
        [true, 7],
        [true, 6],
      ])
      // 4 used: 16 of 20 left before this request.
      expect(await ask(high)).toEqual([[true, 15]])
      expect(await ask(low)).toEqual([[true, 4]])
      expect(await ask(high)).toEqual([[true, 13]])
      // Up to 17 used under 20: beyond the low process's burst, which admits nothing more...
      expect(await last(high, 10)).toEqual([true, 3])
      expect(await ask(low, 2)).toEqual([
        [false, 0],
        [false, 0],
      ])
      // ...and writes the key back as an empty bucket of 10: the 7 used beyond it are forgotten,
      // and the high process finds them again (at most the difference of the bursts per round
      // trip through the lower figures).
      expect(await ask(high)).toEqual([[true, 9]])
    })

    it('additive: a low process caps what was used at its burst, and the high one gets the rest again', async () => {
      const prefix = uniquePrefix('figures')
      const low = process(prefix, 10, 'additive')
      const high = process(prefix, 20, 'additive')
      expect(await last(high, 17)).toEqual([true, 3])
      // 17 used is 10 under the low figures: nothing left there...
      expect(await ask(low)).toEqual([[false, 0]])
      // ...and written back as 10 used: the high process finds 10 left, not 3.
      expect(await ask(high)).toEqual([[true, 9]])
    })

    it('proportional: each process charges its share of its own allowance, and a round trip keeps the share', async () => {
      const prefix = uniquePrefix('figures')
      const low = process(prefix, 10, 'proportional')
      const high = process(prefix, 20, 'proportional')
      expect(await last(high, 17)).toEqual([true, 3])
      // 17 of 20 is 8.5 of 10: one request left (half a token over).
      expect(await ask(low)).toEqual([[true, 0]])
      // 9.5 of 10 is 19 of 20: one left, nothing found again; a request the low process admitted
      // cost the high one two of its units.
      expect(await ask(high)).toEqual([[true, 0]])
      expect(await ask(high)).toEqual([[false, 0]])
      expect(await ask(low)).toEqual([[false, 0]])
    })

    it("a rule's new version takes its clients' figures along, and a process on the old one rolls none back", async () => {
      const prefix = uniquePrefix('figures')
      const versioned = (version: number, burst: number, figures: number) => {
        const redis = new Redis(REDIS_URL)
        connections.push(redis)
        const store = redisStore({ client: ioredisClient(redis), time: 'caller', prefix, layout })
        const rules = (own: number, v: number): RuleConfig[] => [
          {
            id: 'api',
            match: { identity: 'api_key' },
            algorithm: 'token_bucket',
            rate: 1,
            period: '1h',
            burst: own,
            version: v,
          },
        ]
        const limiter = createLimiter({
          rules: rules(burst, version),
          store,
          figures: { api: { of: () => ({ burst: figures }) } },
          logger: false,
        })
        return { limiter, update: (own: number, v: number) => limiter.update!(rules(own, v)) }
      }
      const updated = versioned(1, 10, 20)
      // A process on version 1 whose lookup still gives the client a burst of 30.
      const old = versioned(1, 10, 30)
      expect(await last(updated.limiter, 5)).toEqual([true, 15])
      expect(await updated.update(12, 2)).toMatchObject({ changed: ['api'] })
      // The client's figures (burst 20) under version 2: its 6 used kept.
      expect(await ask(updated.limiter)).toEqual([[true, 14]])
      // The old process meets a version 2 state: decided under its figures (20, not its own 30),
      // nothing rolled back.
      expect(await ask(old.limiter)).toEqual([[true, 13]])
      expect(await ask(updated.limiter)).toEqual([[true, 12]])
    })

    it("a refund, an operator's peek and reset find the key under the client's figures", async () => {
      const prefix = uniquePrefix('figures')
      const high = process(prefix, 20, 'keep')
      const verdicts: Verdict[] = []
      for (let i = 0; i < 3; i++) verdicts.push((await high.decide(facts, { now: NOW })) as Verdict)
      expect(verdicts.at(-1)!.decisions[0]!.remaining).toBe(17)
      await high.refund(verdicts[0]!, { now: NOW })
      expect(await ask(high)).toEqual([[true, 17]])
      const operations = limiterOperations(high)
      // Looked at under the rule's own figures (burst 10): the 3 used carry into them.
      const report = await operations.peek('api_key:k', 'api', { now: NOW })
      expect(report.decision).toMatchObject({ allowed: true, remaining: 7, limit: 10 })
      // The client's next request carries them back into its own figures.
      expect(await ask(high)).toEqual([[true, 16]])
      await operations.reset('api_key:k', 'api', { now: NOW })
      expect(await ask(high)).toEqual([[true, 19]])
    })
  },
)
