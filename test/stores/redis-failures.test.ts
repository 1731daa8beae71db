// Redis failing under a live limiter: scripts flushed, the server restarted, paused (hung),
// absent at start-up. Each rule follows its policy (fail open or closed), nothing crashes, no
// promise is left unhandled, and decisions resume when Redis comes back.

import { once } from 'node:events'
import { createLimiter, type Limiter, type RuleConfig, type Verdict } from '@tollgate/core'
import {
  ioredisClient,
  nodeRedisClient,
  type RedisScriptClient,
  type RedisStore,
  redisScripts,
  redisStore,
} from '@tollgate/redis'
import { freePort, type RedisServer, startRedisServer } from '@tollgate/test-utils/redis-server'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type DrivenDeadlines, drivenDeadlines } from './support/deadlines.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'

const TIMEOUT_MS = 150
const BURST = 5

const rules = (onStoreError: 'open' | 'closed'): RuleConfig[] => [
  {
    id: `reads-${onStoreError}`,
    match: { identity: 'ip' },
    algorithm: 'gcra',
    rate: 1,
    period: '1h',
    burst: BURST,
    onStoreError,
  },
]

const request = (ip = '203.0.113.7') => ({ method: 'GET', path: '/v1/quotes', identities: { ip } })

/**
 * A limiter per policy over one client, as a gateway would build them; their calls time out on
 * the deadlines' time (see drivenDeadlines), never on the clock of a loaded machine.
 */
function limiters(given: RedisScriptClient) {
  const calls = drivenDeadlines(given, TIMEOUT_MS)
  const errors: unknown[] = []
  const stores: RedisStore[] = []
  const make = (policy: 'open' | 'closed') => {
    const store = redisStore({
      client: calls.client,
      prefix: uniquePrefix('fail'),
      timeoutMs: TIMEOUT_MS,
      deadlines: calls.deadlines,
    })
    stores.push(store)
    return createLimiter({
      rules: rules(policy),
      store,
      onError: (error) => errors.push(error),
      logger: false,
    })
  }
  return { open: make('open'), closed: make('closed'), errors, stores, calls }
}

/**
 * Decides a request while Redis cannot answer: the verdict, and how long the deadlines' time ran
 * before it came (0 when the client failed the call at once).
 */
async function timed(
  limiter: Limiter,
  calls: DrivenDeadlines,
): Promise<{ verdict: Verdict; ms: number }> {
  const started = calls.now()
  const verdict = await calls.timingOut(() => limiter.decide(request()))
  return { verdict, ms: calls.now() - started }
}

/**
 * Decides until Redis answers again, each attempt once the client is connected: a call waits for
 * the connection (its deadline does not move), so only a client that fails a call (one in flight
 * on a connection that dropped) makes another attempt. Returns the first verdict Redis decided.
 */
async function untilAnswered(limiter: Limiter, ready: () => Promise<void>): Promise<Verdict> {
  for (let attempt = 0; attempt < 50; attempt++) {
    await ready()
    const verdict = await limiter.decide(request(`198.51.100.${Math.floor(Math.random() * 250)}`))
    if (verdict.storeFailed !== true) return verdict
  }
  throw new Error('Redis did not answer 50 attempts in a row, each once the client was ready')
}

function expectPolicies(open: Verdict, closed: Verdict) {
  expect(open).toMatchObject({ allowed: true, storeFailed: true })
  expect(closed).toMatchObject({ allowed: false, reason: 'store-unavailable', storeFailed: true })
}

// Anything that escapes as an unhandled rejection fails the test that caused it.
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled)
})
afterAll(() => {
  process.off('unhandledRejection', onUnhandled)
})
afterEach(async () => {
  // Calls still queued in a client were failed when it closed (the tests wait for that); a
  // rejection nobody handled is reported once the promise jobs of that turn have run.
  await new Promise(setImmediate)
  expect(unhandled).toEqual([])
})

// On a server of its own: flushing the shared Redis's scripts would disturb other tests.
describe.skipIf(!redisServerBinary)('SCRIPT FLUSH in the middle of traffic', () => {
  it('reloads the scripts transparently and counts exactly', async () => {
    const server = await startRedisServer()
    const redis = new Redis(server.port, '127.0.0.1')
    try {
      const { closed, stores } = limiters(ioredisClient(redis))
      const verdicts: Verdict[] = []
      for (let i = 0; i < 2 * BURST; i++) {
        if (i === 2 || i === 4) await redis.script('FLUSH')
        verdicts.push(await closed.decide(request()))
      }
      expect(verdicts.every((v) => v.storeFailed !== true)).toBe(true)
      expect(verdicts.filter((v) => v.allowed)).toHaveLength(BURST)
      // One rule per request, one at a time: its own one-rule script for one request served
      // them, and is cached again (its batch script, never needed, is not).
      const oneRule = stores[1]!
        .scripts()
        .filter((script) => !Object.values(redisScripts).includes(script))
      expect(oneRule).toHaveLength(2)
      expect(await redis.script('EXISTS', ...oneRule.map((script) => script.sha))).toEqual([1, 0])
    } finally {
      redis.disconnect()
      await server.stop()
    }
  })
})

const clients = [
  [
    'ioredis',
    (port: number) => {
      const redis = new Redis(port, '127.0.0.1', { retryStrategy: () => 25 })
      return {
        client: ioredisClient(redis),
        ready: async () => {
          if (redis.status !== 'ready') await once(redis, 'ready')
        },
        close: async () => {
          // With a connection open or opening, its calls fail when it ends, before 'end' is
          // emitted. Between reconnections there is none: its queued calls then never settle
          // (nor does 'end' come).
          const open = redis.status !== 'end' && redis.status !== 'reconnecting'
          const ended = open ? once(redis, 'end') : undefined
          redis.disconnect()
          await ended
        },
      }
    },
  ],
  [
    'node-redis',
    (port: number) => {
      const redis = createClient({
        url: `redis://127.0.0.1:${port}`,
        socket: { reconnectStrategy: () => 25 },
      })
      const client = nodeRedisClient(redis)
      // The app does not wait for Redis to start: a Redis that is down must not stop it.
      redis.connect().catch(() => {})
      return {
        client,
        ready: async () => {
          if (!redis.isReady) await once(redis, 'ready')
        },
        // Fails its queued calls as it returns.
        close: async () => redis.destroy(),
      }
    },
  ],
] as const

describe.skipIf(!redisServerBinary).each(clients)(
  'a Redis that fails, through %s',
  (_name, connect) => {
    let server: RedisServer
    let connection: ReturnType<(typeof clients)[number][1]>
    beforeEach(async () => {
      server = await startRedisServer()
      connection = connect(server.port)
    })
    afterEach(async () => {
      await connection?.close()
      await server?.stop()
    })

    it('restarted: follows each policy while it is down, then decides again', async () => {
      const { open, closed, errors, calls } = limiters(connection.client)
      const { ready } = connection
      await untilAnswered(open, ready)
      expect((await closed.decide(request())).allowed).toBe(true)

      await server.kill()
      const down = [await timed(open, calls), await timed(closed, calls)]
      expectPolicies(down[0]!.verdict, down[1]!.verdict)
      // Failed at once, or when the budget ran out: never later.
      for (const { ms } of down) expect(ms).toBeLessThanOrEqual(TIMEOUT_MS)
      expect(errors.length).toBeGreaterThanOrEqual(2)

      await server.restart()
      // An empty server: the scripts are gone too, and are reloaded without anyone noticing.
      expect((await untilAnswered(closed, ready)).allowed).toBe(true)
      expect((await untilAnswered(open, ready)).allowed).toBe(true)
    })

    it('paused (hung): gives up after the timeout, then decides again once it answers', async () => {
      const { open, closed, calls } = limiters(connection.client)
      const { ready } = connection
      await untilAnswered(open, ready)

      server.pause()
      try {
        const hung = [await timed(open, calls), await timed(closed, calls)]
        expectPolicies(hung[0]!.verdict, hung[1]!.verdict)
        // Neither a ms before the budget ran out nor after.
        for (const { ms } of hung) expect(ms).toBe(TIMEOUT_MS)
      } finally {
        server.resume()
      }
      expect((await untilAnswered(closed, ready)).allowed).toBe(true)
    })
  },
)

describe.skipIf(!redisServerBinary).each(clients)(
  'no Redis at start-up, through %s',
  (_name, connect) => {
    it('follows each policy, and decides once a server appears on that port', async () => {
      const port = await freePort()
      const connection = connect(port)
      let server: RedisServer | undefined
      try {
        const { open, closed, calls } = limiters(connection.client)
        const absent = [await timed(open, calls), await timed(closed, calls)]
        expectPolicies(absent[0]!.verdict, absent[1]!.verdict)
        for (const { ms } of absent) expect(ms).toBeLessThanOrEqual(TIMEOUT_MS)

        server = await startRedisServer({ port })
        expect((await untilAnswered(closed, connection.ready)).allowed).toBe(true)
      } finally {
        await connection.close()
        await server?.stop()
      }
    })
  },
)
