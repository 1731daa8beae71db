// The same scripted trace on every adapter, counted by the OpenTelemetry SDK's in-memory reader:
// every framework goes through the adapter kit and the observed limiter, so every one must give
// exactly the same counts.
import { memoryStore, type RuleConfig, type Store } from '@tollgate/core'
import { observedLimiter } from '@tollgate/core/observe'
import { ATTRIBUTES as A, INSTRUMENTS as I, tollgateMetrics } from '@tollgate/opentelemetry'
import { type RedisStore, redisStore } from '@tollgate/redis'
import { manualClock } from '@tollgate/test-utils'
import { inMemoryMetrics, linesOf } from '@tollgate/test-utils/metrics'
import { afterAll, describe, expect, it } from 'vitest'
import {
  REDIS_URL,
  redisAvailable,
  removeTestKeys,
  uniquePrefix,
} from '../stores/support/redis-env.js'
import { ioredisTarget } from '../stores/support/targets.js'
import { T0 } from './scenarios/index.js'
import { TARGETS } from './targets.js'

const RULES: RuleConfig[] = [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1s',
    burst: 2,
  },
  {
    id: 'new-login',
    match: { identity: 'ip', route: ['POST /login'] },
    algorithm: 'fixed_window',
    limit: 1,
    window: '1m',
    mode: 'shadow',
  },
]

const redis = redisAvailable ? await ioredisTarget(REDIS_URL) : undefined
afterAll(async () => {
  await removeTestKeys()
  await redis?.close()
})

type StoreCase = {
  readonly name: string
  readonly kind: string
  readonly make: () => Store
  /** The memory store's entries gauge, for a store that has one. */
  readonly entries: string[]
  /** The Redis store's script loads gauge, by what the store counted. */
  readonly scriptLoads: (store: Store) => string[]
}

const STORES: readonly StoreCase[] = [
  {
    name: 'the memory store',
    kind: 'memory',
    make: () => memoryStore(),
    entries: [' = 2'],
    scriptLoads: () => [],
  },
  {
    name: 'an asynchronous store',
    kind: 'custom',
    make: () => {
      const inner = memoryStore()
      return {
        consume: async (charges, now) => inner.consume(charges, now),
        refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
      }
    },
    entries: [],
    scriptLoads: () => [],
  },
  ...(redis === undefined
    ? []
    : [
        {
          name: 'the Redis store',
          kind: 'redis',
          make: () =>
            redisStore({ client: redis.client, prefix: uniquePrefix('metrics'), time: 'caller' }),
          entries: [],
          // Loaded scripts depend on what the shared server has cached already; none was lost.
          scriptLoads: (made: Store) => {
            const { scriptLoads, scriptReloads } = made as RedisStore
            expect(scriptReloads).toBe(0)
            return [`first_use = ${scriptLoads}`, 'noscript = 0']
          },
        },
      ]),
]

describe.each(STORES)('metrics over $name', (store) => {
  it.each(TARGETS)(
    'on $name: exact counts of a scripted trace, no client address in any attribute',
    async (target) => {
      const sdk = inMemoryMetrics()
      const clock = manualClock(T0)
      const made = store.make()
      const limiter = observedLimiter({
        rules: RULES,
        store: made,
        clock,
        logger: false,
        observers: [tollgateMetrics({ meterProvider: sdk.meterProvider })],
      })
      const client = await target.start({
        rules: limiter as never,
        options: { logger: false },
        clock,
        skip: (path) => path.startsWith('/health'),
        refund: undefined,
        onShadowDenied: () => undefined,
        onAppError: (error) => {
          throw error
        },
      })
      const statuses: number[] = []
      const send = async (method: string, path: string) =>
        statuses.push((await client.send({ method, path, headers: {} })).status)
      try {
        for (let i = 0; i < 3; i++) await send('GET', '/')
        await send('GET', '/health')
        clock.advance(2000)
        for (let i = 0; i < 2; i++) await send('POST', '/login')
      } finally {
        await client.close()
      }
      expect(statuses).toEqual([200, 200, 429, 200, 200, 200])
      const metrics = await sdk.collect()
      await sdk.shutdown()
      expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome, A.mode])).toEqual([
        'new-login admitted shadow = 1',
        'new-login shadow-denied shadow = 1',
        'per-ip admitted enforce = 4',
        'per-ip denied enforce = 1',
      ])
      expect(linesOf(metrics.get(I.charged), [A.rule])).toEqual(['new-login = 1', 'per-ip = 4'])
      expect(linesOf(metrics.get(I.storeDuration), [A.storeKind, A.storeOperation])).toEqual([
        `${store.kind} consume = 5`,
      ])
      expect(linesOf(metrics.get(I.memoryEntries), [])).toEqual(store.entries)
      expect(linesOf(metrics.get(I.redisScriptLoads), [A.loadReason])).toEqual(
        store.scriptLoads(made),
      )
      const attributeValues = [...metrics.values()].flatMap((points) =>
        points.flatMap((point) => Object.values(point.attributes).map(String)),
      )
      expect(attributeValues.filter((value) => /127\.0\.0\.1|::1|ip:/.test(value))).toEqual([])
    },
  )
})
