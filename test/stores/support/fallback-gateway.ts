// A gateway process for the fallback test: Express with one fallback rule on a Redis store
// wrapped in fallbackStore, its instance count from heartbeats in Redis. Its clock is the
// test's (set over IPC), so windows and the breaker's probes move only when the test says.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { fallbackStore, type OutageEvent, type RuleConfig, rateLimit } from '@tollgate/express'
import { ioredisClient, redisMembership, redisStore } from '@tollgate/redis'
import express from 'express'
import { Redis } from 'ioredis'

export type FallbackGatewayConfig = {
  readonly url: string
  readonly prefix: string
  readonly rule: RuleConfig
  readonly start: number
  readonly timeoutMs: number
  readonly probeIntervalMs: number
}

export type FallbackGatewayCommand =
  | { readonly now: number }
  | { readonly beat: true }
  | { readonly ready: true }
  | { readonly stats: true }
  | { readonly exit: true }

export type FallbackGatewayStats = {
  readonly instances: number
  readonly state: string
  readonly degraded: number
  readonly outages: readonly OutageEvent['type'][]
  readonly unhandled: number
}

const config = JSON.parse(process.argv[2]!) as FallbackGatewayConfig
let now = config.start
let unhandled = 0
process.on('unhandledRejection', () => {
  unhandled++
})

// Calls fail at once while Redis is unreachable, and give up after `timeoutMs` while it hangs.
// Calls given up on are not sent again after a reconnect (the docs' settings).
const redis = new Redis(config.url, {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  retryStrategy: () => 25,
})
redis.on('error', () => {})
const client = ioredisClient(redis)
const membership = redisMembership({ client, prefix: config.prefix, intervalMs: 600_000 })
const outages: OutageEvent['type'][] = []
const store = fallbackStore(
  redisStore({ client, prefix: config.prefix, time: 'caller', timeoutMs: config.timeoutMs }),
  {
    instances: membership.count,
    probeIntervalMs: config.probeIntervalMs,
    logger: false,
    onOutage: (event) => outages.push(event.type),
  },
)
const app = express()
app.use(rateLimit([config.rule], { store, clock: { now: () => now }, logger: false }))
app.get('/api', (_req, res) => {
  res.send('ok')
})
const server = app.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port })
})

process.on('message', async (command: FallbackGatewayCommand) => {
  if ('now' in command) {
    now = command.now
    process.send!({ now })
  } else if ('ready' in command) {
    // Once the client has reconnected (a restarted server): real time, bounded by the test's.
    if (redis.status !== 'ready') await once(redis, 'ready')
    // And once the server has run what this connection sent it before (calls given up on while
    // it was paused): it answers a connection's commands in order, so the PING's reply is last.
    await redis.ping()
    process.send!({ ready: true })
  } else if ('beat' in command) {
    process.send!({ instances: await membership.beat() })
  } else if ('stats' in command) {
    await store.reconciling()
    const stats: FallbackGatewayStats = {
      instances: membership.count(),
      state: store.stats().state,
      degraded: store.stats().degraded,
      outages,
      unhandled,
    }
    process.send!(stats)
  } else {
    server.close()
    redis.disconnect()
    process.exit(0)
  }
})
