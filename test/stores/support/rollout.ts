// A rollout of new figures: two processes (two stores, two connections, two limiters) on the same
// Redis keys, one updated to a newer version of a rule while the other still runs the older one.
import { createLimiter, type Limiter, type RuleConfig, type Verdict } from '@tollgate/core'
import { isRateLimitError } from '@tollgate/core/store'
import { type RedisScriptClient, redisStore } from '@tollgate/redis'
import { describe, expect, it } from 'vitest'
import { uniquePrefix } from './redis-env.js'

const NOW = 1_800_000_000_000

const facts = (ip: string) => ({ method: 'GET', path: '/', identities: { ip } })

type Layout = 'rule' | 'identity'

/** A process: a store of its own on its own connection, and a limiter with `rules`. */
type Process = (rules: RuleConfig[]) => Limiter

/** Each request's [allowed, remaining] on `ip` at NOW (time stands still: nothing refills). */
async function ask(limiter: Limiter, ip: string, times = 1): Promise<[boolean, number][]> {
  const seen: [boolean, number][] = []
  for (let i = 0; i < times; i++) {
    const verdict = (await limiter.decide(facts(ip), { now: NOW })) as Verdict
    const d = verdict.decisions[0]!
    seen.push([d.allowed, d.remaining])
  }
  return seen
}

const bucket = (burst: number, version: number | undefined, onChange = 'keep'): RuleConfig =>
  ({
    id: 'api',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1h',
    burst,
    onChange,
    ...(version === undefined ? {} : { version }),
  }) as RuleConfig

const window = (limit: number, version: number, onChange = 'proportional'): RuleConfig =>
  ({
    id: 'api',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit,
    window: '1h',
    onChange,
    version,
  }) as RuleConfig

/**
 * The rollout suite on the clients `connect` makes (each call a new connection: a process of
 * its own), in both key layouts.
 */
export function describeRollout(
  name: string,
  connect: () => Promise<{ client: RedisScriptClient; close(): Promise<void> }>,
): void {
  describe.each(['rule', 'identity'] as Layout[])(`${name}, layout %s`, (layout) => {
    /** Processes sharing one prefix, each on a connection of its own, closed at the end. */
    async function processes(): Promise<{ start: Process; close(): Promise<void> }> {
      const prefix = uniquePrefix('rollout')
      const connections: { close(): Promise<void> }[] = []
      const clients: RedisScriptClient[] = []
      for (let i = 0; i < 3; i++) {
        const connection = await connect()
        connections.push(connection)
        clients.push(connection.client)
      }
      let started = 0
      return {
        start: (rules) => {
          const client = clients[started++ % clients.length]!
          const store = redisStore({ client, time: 'caller', prefix, layout, timeoutMs: 10_000 })
          return createLimiter({ rules, store, logger: false })
        },
        close: async () => {
          await Promise.all(connections.map((connection) => connection.close()))
        },
      }
    }

    it('a process on the older version decides a newer state under its figures, and never rolls it back', async () => {
      const { start, close } = await processes()
      try {
        const old = start([bucket(10, 1)])
        const updated = start([bucket(10, 1)])
        expect(await ask(old, '192.0.2.1', 4)).toEqual([
          [true, 9],
          [true, 8],
          [true, 7],
          [true, 6],
        ])
        expect(await ask(updated, '192.0.2.1', 2)).toEqual([
          [true, 5],
          [true, 4],
        ])
        // Raised to 20 (keep): the 6 used carry, 14 left before this request.
        expect(await updated.update!([bucket(20, 2)])).toMatchObject({ changed: ['api'] })
        expect(await ask(updated, '192.0.2.1')).toEqual([[true, 13]])
        // The old process meets the version 2 state: decided under 20, written back as version 2.
        expect(await ask(old, '192.0.2.1', 3)).toEqual([
          [true, 12],
          [true, 11],
          [true, 10],
        ])
        // Nothing rolled back, nothing lost or counted twice: 10 used of 20.
        expect(await ask(updated, '192.0.2.1')).toEqual([[true, 9]])
        // A process started later on version 2 reads the same state.
        expect(await ask(start([bucket(20, 2)]), '192.0.2.1')).toEqual([[true, 8]])
        // A key the old process writes first (under version 1) is carried by the new one.
        expect(await ask(old, '192.0.2.2', 7)).toContainEqual([true, 3])
        expect(await ask(updated, '192.0.2.2')).toEqual([[true, 12]])
        expect(await ask(old, '192.0.2.2')).toEqual([[true, 11]])
      } finally {
        await close()
      }
    })

    it('a lowered limit holds in every process from the first request that meets it', async () => {
      const { start, close } = await processes()
      try {
        const old = start([window(10, 1)])
        const updated = start([window(10, 1)])
        await ask(old, '198.51.100.1', 2)
        await ask(updated, '198.51.100.1', 2)
        // Halved, proportional: 4 of 10 used become 2 of 5.
        await updated.update!([window(5, 2)])
        expect(await ask(updated, '198.51.100.1')).toEqual([[true, 2]])
        // The old process (limit 10) admits only what the new limit leaves.
        expect(await ask(old, '198.51.100.1', 3)).toEqual([
          [true, 1],
          [true, 0],
          [false, 0],
        ])
        expect(await ask(updated, '198.51.100.1')).toEqual([[false, 0]])
      } finally {
        await close()
      }
    })

    it('refuses a change of figures whose version does not rise, or that has none, and keeps the running rules', async () => {
      const { start, close } = await processes()
      try {
        const limiter = start([bucket(10, 1)])
        const refused = async (rules: RuleConfig[], field: string) => {
          const error = await Promise.resolve(limiter.update!(rules)).catch((e: unknown) => e)
          expect(isRateLimitError(error) && error).toMatchObject({ rule: 'api', field })
        }
        await refused([bucket(20, 1)], 'version')
        await refused([bucket(20, undefined)], 'version')
        expect(limiter.rules[0]).toMatchObject({ burst: 10, version: 1 })
        expect(limiter.updatesRefused).toBe(2)
        // The version alone may change: the same figures carry as they are.
        expect(await limiter.update!([bucket(10, 5)])).toMatchObject({ unchanged: ['api'] })
        const log = start([
          {
            id: 'api',
            match: { identity: 'ip' },
            algorithm: 'sliding_log',
            limit: 3,
            window: '1m',
            version: 1,
          },
        ])
        const error = await Promise.resolve(
          log.update!([
            {
              id: 'api',
              match: { identity: 'ip' },
              algorithm: 'sliding_log',
              limit: 5,
              window: '1m',
              version: 2,
            },
          ]),
        ).catch((e: unknown) => e)
        expect(isRateLimitError(error) && error).toMatchObject({ rule: 'api', field: 'algorithm' })
      } finally {
        await close()
      }
    })
  })
}
