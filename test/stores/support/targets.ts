import { ioredisClient, nodeRedisClient, type RedisScriptClient } from '@tollgate/redis'
import { Cluster, Redis } from 'ioredis'
import { createClient, createCluster } from 'redis'

/** A connected client of one library, single node or cluster, wrapped for the store. */
export type Target = {
  readonly name: string
  readonly client: RedisScriptClient
  /** Runs a raw command on the node that owns `key` (for PTTL, MEMORY USAGE, …). */
  command(key: string | undefined, args: readonly string[]): Promise<unknown>
  close(): Promise<void>
}

export async function ioredisTarget(url: string): Promise<Target> {
  const redis = new Redis(url)
  redis.on('error', () => {})
  return {
    name: 'ioredis',
    client: ioredisClient(redis),
    command: (_key, [name, ...args]) => redis.call(name!, ...args),
    close: async () => {
      redis.disconnect()
    },
  }
}

export async function nodeRedisTarget(url: string): Promise<Target> {
  const client = createClient({ url })
  const wrapped = nodeRedisClient(client)
  await client.connect()
  return {
    name: 'node-redis',
    client: wrapped,
    command: (_key, args) => client.sendCommand([...args]),
    close: async () => {
      client.destroy()
    },
  }
}

export async function ioredisClusterTarget(ports: readonly number[]): Promise<Target> {
  const cluster = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })))
  cluster.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    cluster.once('ready', () => resolve())
    cluster.once('end', () => reject(new Error('ioredis Cluster ended before ready')))
  })
  return {
    name: 'ioredis Cluster',
    client: ioredisClient(cluster),
    // ioredis routes a command by the key its command table says it has.
    command: (_key, [name, ...args]) => cluster.call(name!, ...args),
    close: async () => {
      cluster.disconnect()
    },
  }
}

export async function nodeRedisClusterTarget(ports: readonly number[]): Promise<Target> {
  const cluster = createCluster({
    rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
  })
  const wrapped = nodeRedisClient(cluster)
  await cluster.connect()
  return {
    name: 'node-redis createCluster',
    client: wrapped,
    command: (key, args) => cluster.sendCommand(key, false, [...args]),
    close: async () => {
      cluster.destroy()
    },
  }
}
