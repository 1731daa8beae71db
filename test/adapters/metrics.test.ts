// The same scripted trace on every adapter, counted by the OpenTelemetry SDK's in-memory reader:
// every framework goes through the adapter kit and the observed limiter, so every one must give
// exactly the same counts.
import { type Clock, memoryStore, type Store, type Timers } from '@tollgate/core'
import { observedLimiter } from '@tollgate/core/observe'
import { ATTRIBUTES as A, INSTRUMENTS as I, tollgateMetrics } from '@tollgate/opentelemetry'
import { type RedisStore, redisStore } from '@tollgate/redis'
import { changes, manualClock, manualTime } from '@tollgate/test-utils'
import {
  inMemoryMetrics,
  linesOf,
  METRIC_RULES as RULES,
  SLOT_WAIT_RULES,
} from '@tollgate/test-utils/metrics'
import { afterAll, describe, expect, it } from 'vitest'
import {
  REDIS_URL,
  redisAvailable,
  removeTestKeys,
  uniquePrefix,
} from '../stores/support/redis-env.js'
import { ioredisTarget } from '../stores/support/targets.js'
import { APPS } from './concurrency/apps.js'
import { open } from './concurrency/client.js'
import { Gates } from './concurrency/gates.js'
import { T0 } from './scenarios/index.js'
import { TARGETS } from './targets.js'

const redis = redisAvailable ? await ioredisTarget(REDIS_URL) : undefined
afterAll(async () => {
  await removeTestKeys()
  await redis?.close()
})

type StoreCase = {
  readonly name: string
  readonly kind: string
  /** A store; on the injected time, for a store that keeps time of its own (leases). */
  readonly make: (time?: { readonly clock: Clock; readonly timers: Timers }) => Store
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
          make: (time?: { readonly clock: Clock; readonly timers: Timers }) =>
            redisStore({
              client: redis.client,
              prefix: uniquePrefix('metrics'),
              time: 'caller',
              ...(time === undefined ? {} : { clock: time.clock, timers: time.timers }),
            }),
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
      // Every call timed, but the memory store's (they take less than the clock reads would).
      expect(linesOf(metrics.get(I.storeDuration), [A.storeKind, A.storeOperation])).toEqual(
        store.kind === 'memory' ? [] : [`${store.kind} consume = 5`],
      )
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

describe.each(STORES)('metrics of requests waiting for a slot, over $name', (store) => {
  it.each(APPS)(
    'on $name: a wait that gets its slot is queued, one that runs out shed',
    async (app) => {
      const sdk = inMemoryMetrics()
      const time = manualTime(T0)
      // The gauges move with the limiter's events: each one checks what the test awaits again.
      const watch = changes()
      const limiter = observedLimiter({
        rules: SLOT_WAIT_RULES,
        store: store.make(time),
        clock: time.clock,
        timers: time.timers,
        logger: false,
        observers: [
          tollgateMetrics({ meterProvider: sdk.meterProvider }),
          { observe: () => watch.changed() },
        ],
      })
      const gates = new Gates()
      const served = await app.start(limiter, gates, { clock: time.clock })
      const line = async (metric: string) =>
        linesOf((await sdk.collect()).get(metric), [A.rule]).join()
      const waiting = (n: number) =>
        watch.until(async () => expect(await line(I.queueLength)).toBe(`reports = ${n}`))
      try {
        const first = open(served.port, '/block/first')
        await gates.started('first')
        const next = open(served.port, '/block/next')
        await waiting(1)
        gates.open('first')
        expect((await first.answer).status).toBe(200)
        // The slot went to the request that waited for it.
        await gates.started('next')
        await waiting(0)
        const late = open(served.port, '/block/late')
        await waiting(1)
        await time.advance(2000)
        expect((await late.answer).status).toBe(429)
        gates.open('next')
        expect((await next.answer).status).toBe(200)
        await watch.until(async () => expect(await line(I.slotsInUse)).toBe('reports = 0'))
      } finally {
        await served.close()
      }
      const metrics = await sdk.collect()
      await sdk.shutdown()
      expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome, A.mode])).toEqual([
        'reports admitted enforce = 1',
        'reports queued enforce = 1',
        'reports shed enforce = 1',
      ])
      expect(linesOf(metrics.get(I.charged), [A.rule])).toEqual(['reports = 2'])
      expect(linesOf(metrics.get(I.queueWait), [A.rule, A.queueResult])).toEqual([
        'reports refused = 1',
        'reports served = 1',
      ])
      const refused = metrics
        .get(I.queueWait)!
        .find((point) => point.attributes[A.queueResult] === 'refused')!
      expect((refused.value as { sum: number }).sum).toBe(2)
    },
  )
})
