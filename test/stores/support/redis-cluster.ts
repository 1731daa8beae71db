import { type RedisServer, redisCli, startRedisServer } from '@tollgate/test-utils/redis-server'

/** A Redis Cluster of three masters, started from the redis-server binary for the tests. */
export type RedisCluster = {
  readonly nodes: readonly RedisServer[]
  stop(): Promise<void>
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const nodes: RedisServer[] = []
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()))
  }
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startRedisServer({ cluster: true }))
    await redisCli([
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ])
    await waitForClusterOk(nodes)
    return { nodes, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Polls CLUSTER INFO on every node until each reports cluster_state:ok (bounded). */
async function waitForClusterOk(nodes: readonly RedisServer[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const states = await Promise.all(
      nodes.map((node) => redisCli(['-p', String(node.port), 'cluster', 'info'])),
    )
    if (states.every((info) => info.includes('cluster_state:ok'))) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`Redis Cluster not ok within ${timeoutMs} ms`)
}
