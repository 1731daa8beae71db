// How the Redis store scales with Redis Cluster shards. Starts its own masters (redis-server on
// BENCH_CLUSTER_PORTS, default 7410–7412), as clusters of 1, 2 and 3 masters, and drives a
// one-rule GCRA at 64 in flight from one process: keys spread over 100,000 identities (every
// slot), then one hot identity. Reports decisions/s and, per shard, the share of one core its
// main thread used: the busiest shard's share says how far the cluster is from its ceiling
// (decisions/s ÷ that share), which is what more shards raise, wherever the load comes from.
// Every server it starts is stopped at the end, or when a step fails.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-cluster
import { execFileSync } from 'node:child_process'
import { gcra } from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { type RedisServer, startRedisServer } from '@tollgate/test-utils/redis-server'
import { Cluster, Redis } from 'ioredis'
import { identities, median, runLoad } from './measure.js'

const {
  BENCH_CLUSTER_PORTS = '7410,7411,7412',
  BENCH_OPS = '30000',
  BENCH_ROUNDS = '3',
} = process.env
const PORTS = BENCH_CLUSTER_PORTS.split(',').map(Number)
const OPS = Number(BENCH_OPS)
const ROUNDS = Number(BENCH_ROUNDS)
const rule = gcra({ rate: 1_000_000_000, periodMs: 60_000, burst: 1_000_000_000 })

/** A cluster-enabled master of the benchmark's own on `port`. */
const startNode = (port: number): Promise<RedisServer> =>
  startRedisServer({ port, cluster: true, extraArgs: ['--cluster-announce-ip', '127.0.0.1'] })

const cli = (port: number, ...args: string[]) =>
  execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' })

/**
 * Masters on `ports`, the 16,384 slots split evenly between them (by hand: `redis-cli --cluster
 * create` wants three masters or more).
 */
async function startCluster(ports: readonly number[]): Promise<RedisServer[]> {
  const nodes: RedisServer[] = []
  try {
    for (const port of ports) nodes.push(await startNode(port))
    ports.forEach((port, i) => {
      const first = Math.floor((16384 * i) / ports.length)
      const last = Math.floor((16384 * (i + 1)) / ports.length) - 1
      cli(port, 'cluster', 'addslotsrange', String(first), String(last))
      if (i > 0) cli(port, 'cluster', 'meet', '127.0.0.1', String(ports[0]))
    })
    await clusterOk(ports)
    return nodes
  } catch (error) {
    await stopCluster(nodes)
    throw error
  }
}

async function clusterOk(ports: readonly number[]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const states = ports.map((port) => cli(port, 'cluster', 'info'))
    const known = (info: string) => info.includes(`cluster_known_nodes:${ports.length}`)
    if (states.every((info) => info.includes('cluster_state:ok') && known(info))) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('cluster not ok')
}

async function stopCluster(nodes: readonly RedisServer[]): Promise<void> {
  await Promise.all(nodes.map((node) => node.stop()))
}

async function cpuSeconds(port: number): Promise<number> {
  const redis = new Redis(port, '127.0.0.1')
  const info = (await redis.info('cpu')) as string
  redis.disconnect()
  const read = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? 0)
  return read('used_cpu_user') + read('used_cpu_sys')
}

type Result = { rate: number; shares: number[]; p99: number }

async function measure(ports: readonly number[], hot: boolean, round: number): Promise<Result> {
  const cluster = new Cluster(
    ports.map((port) => ({ host: '127.0.0.1', port })),
    { enableAutoPipelining: true },
  )
  try {
    await new Promise((resolve) => cluster.once('ready', resolve))
    // The store's defaults; on a cluster every request is its own call.
    const store = redisStore({ client: ioredisClient(cluster), prefix: 'bench:cluster' })
    const decide = async (identity: string) => {
      const charge = { rule: 'r', algorithm: rule, key: identity, cost: 1, shadow: false }
      return (await store.consume([charge], 0)).decisions[0]!.allowed
    }
    const ids = hot
      ? Array.from({ length: OPS }, () => 'ip:192.0.2.1')
      : identities(100_000, OPS, round + 1)
    await runLoad(decide, ids.slice(0, 3000), 64)
    const before = await Promise.all(ports.map(cpuSeconds))
    const started = performance.now()
    const load = await runLoad(decide, ids, 64)
    const seconds = (performance.now() - started) / 1000
    const after = await Promise.all(ports.map(cpuSeconds))
    return {
      rate: load.rate,
      p99: load.p99Ms,
      shares: ports.map((_, i) => (after[i]! - before[i]!) / seconds),
    }
  } finally {
    cluster.disconnect()
  }
}

const lines = [
  `| masters | keys | decisions/s | p99 ms | each shard's main thread (share of a core) | ceiling: decisions/s ÷ busiest share |`,
  '| ---: | --- | ---: | ---: | --- | ---: |',
]
for (let masters = 1; masters <= PORTS.length; masters++) {
  const ports = PORTS.slice(0, masters)
  const nodes = await startCluster(ports)
  try {
    for (const hot of [false, true]) {
      const results: Result[] = []
      for (let round = 0; round < ROUNDS; round++) results.push(await measure(ports, hot, round))
      const rate = median(results.map((r) => r.rate))
      const shares = ports.map((_, i) => median(results.map((r) => r.shares[i]!)))
      const ceilings = results.map((r) => r.rate / Math.max(...r.shares))
      const spread = `${Math.round(Math.min(...ceilings)).toLocaleString('en-US')}–${Math.round(Math.max(...ceilings)).toLocaleString('en-US')}`
      lines.push(
        `| ${masters} | ${hot ? 'one hot identity' : '100,000 identities'} | ${Math.round(rate).toLocaleString('en-US')} | ${median(results.map((r) => r.p99)).toFixed(2)} | ${shares.map((s) => s.toFixed(2)).join(', ')} | ${Math.round(median(ceilings)).toLocaleString('en-US')} (${spread}) |`,
      )
      process.stderr.write(`${lines.at(-1)}\n`)
    }
  } finally {
    await stopCluster(nodes)
  }
}
console.log(
  `Redis Cluster, ${OPS.toLocaleString('en-US')} decisions per run at 64 in flight from one process (ioredis Cluster, auto-pipelining), one-rule GCRA, ${ROUNDS} rounds (medians; ceiling range over rounds).\n`,
)
console.log(lines.join('\n'))
