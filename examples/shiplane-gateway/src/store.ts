import type { Store } from '@tollgate/express'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'

/** A store and how to let go of it. */
export type GatewayStore = {
  readonly store: Store | undefined
  /** For logs: `memory` or `Redis at <url>`. */
  readonly description: string
  readonly close: () => Promise<void>
}

export type RedisChoice = {
  readonly url: string
  /** Starts every key, so that runs and apps sharing a Redis never see each other's state. */
  readonly prefix: string
  /** `caller` lets an injected clock drive Redis too (the demo); `server` uses Redis `TIME`. */
  readonly time: 'server' | 'caller'
}

/** The memory store (the limiter's default), or Redis when `redis` is given. */
export async function openStore(redis: RedisChoice | undefined): Promise<GatewayStore> {
  if (redis === undefined) {
    return { store: undefined, description: 'memory', close: async () => {} }
  }
  // No offline queue: while Redis is unreachable, calls fail at once and each rule's
  // on_store_error decides, instead of requests waiting on a queue.
  const client = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false })
  client.on('error', () => {})
  await client.connect()
  return {
    store: redisStore({ client: ioredisClient(client), prefix: redis.prefix, time: redis.time }),
    description: `Redis at ${redis.url}`,
    close: async () => {
      await client.quit()
    },
  }
}
