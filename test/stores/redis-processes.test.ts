// Several OS processes share one limit through Redis: for the exact algorithms the number
// admitted is the limit, exactly, on a single node and on a Redis Cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Gateways, type Scenario, startGateways } from './support/gateways.js'
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js'
import {
  REDIS_URL,
  redisAvailable,
  redisServerBinary,
  removeTestKeys,
  uniquePrefix,
} from './support/redis-env.js'
import type { AlgorithmSpec } from './support/worker.js'

const GATEWAYS = 4
const LIMIT = 40
const ATTEMPTS = 25 // per gateway: 100 requests in all for a limit of 40

// With the caller's clock fixed nothing refills, so every algorithm is exact; with the server's
// clock, rules whose refill is far slower than the test are.
const rate = (name: 'token_bucket' | 'gcra' | 'leaky_bucket', periodMs: number): AlgorithmSpec => ({
  name,
  rate: 1,
  periodMs,
  burst: LIMIT,
})
const window = (
  name: 'fixed_window' | 'sliding_log' | 'sliding_window',
  limit = LIMIT,
): AlgorithmSpec => ({ name, limit, windowMs: 3_600_000 })
const ALGORITHMS: readonly AlgorithmSpec[] = [
  rate('token_bucket', 1000),
  rate('gcra', 1000),
  rate('leaky_bucket', 1000),
  window('fixed_window'),
  window('sliding_log'),
  window('sliding_window'),
]

const scenarios: readonly (Scenario & { readonly label: string; readonly expected: number })[] = [
  ...ALGORITHMS.map((algorithm) => ({
    label: `${algorithm.name}, caller's clock fixed`,
    rules: [{ id: `${algorithm.name}-caller`, key: 'ip:203.0.113.7', algorithm }],
    attempts: ATTEMPTS,
    inFlight: 4,
    now: 1_000_000,
    expected: LIMIT,
  })),
  ...[rate('token_bucket', 3_600_000), rate('gcra', 3_600_000), window('sliding_log')].map(
    (algorithm) => ({
      label: `${algorithm.name}, server's clock`,
      rules: [{ id: `${algorithm.name}-server`, key: 'ip:203.0.113.7', algorithm }],
      attempts: ATTEMPTS,
      inFlight: 4,
      now: 'server' as const,
      expected: LIMIT,
    }),
  ),
  {
    label: 'two rules on two identities (different slots on a cluster)',
    rules: [
      { id: 'per-key', key: 'api_key:k_1', algorithm: rate('gcra', 3_600_000) },
      { id: 'per-ip', key: 'ip:203.0.113.7', algorithm: window('sliding_log', 25) },
    ],
    attempts: ATTEMPTS,
    inFlight: 2,
    now: 1_000_000,
    // The per-key rule has room to spare, so only the per-ip rule binds: exactly its 25.
    expected: 25,
  },
  {
    label: 'three rules on one identity (one slot on a cluster)',
    rules: [
      { id: 'hourly', key: 'user:7', algorithm: rate('gcra', 3_600_000) },
      { id: 'window', key: 'user:7', algorithm: window('fixed_window', 30) },
      { id: 'log', key: 'user:7', algorithm: window('sliding_log') },
    ],
    attempts: ATTEMPTS,
    inFlight: 4,
    now: 1_000_000,
    // The fixed window is the tightest: exactly its 30, whatever the others had room for.
    expected: 30,
  },
  // One key per identity: the rules' states in one value (the log on a key of its own), read
  // and written by many processes at once.
  ...(['caller', 'server'] as const).map((clock) => ({
    label: `three rules on one identity, one key per identity, ${clock}'s clock`,
    rules: [
      { id: `hourly-${clock}`, key: 'user:8', algorithm: rate('gcra', 3_600_000) },
      { id: `window-${clock}`, key: 'user:8', algorithm: window('fixed_window', 30) },
      { id: `log-${clock}`, key: 'user:8', algorithm: window('sliding_log') },
    ],
    attempts: ATTEMPTS,
    inFlight: 4,
    now: clock === 'caller' ? 1_000_000 : ('server' as const),
    layout: 'identity' as const,
    expected: 30,
  })),
  {
    label: 'two rules on one identity, one key per identity, clocks 50 ms apart',
    rules: [
      { id: 'skew-gcra', key: 'user:9', algorithm: rate('token_bucket', 3_600_000) },
      { id: 'skew-window', key: 'user:9', algorithm: window('sliding_window', 20) },
    ],
    attempts: ATTEMPTS,
    inFlight: 4,
    now: 1_000_000,
    skewMs: 50,
    layout: 'identity' as const,
    expected: 20,
  },
]

function suite(connection: () => { url: string } | { ports: readonly number[] }) {
  let gateways: Gateways
  beforeAll(async () => {
    gateways = await startGateways(GATEWAYS, {
      connection: connection(),
      prefix: uniquePrefix('procs'),
      scenarios,
    })
  }, 60_000)
  afterAll(async () => {
    await gateways?.close()
  })

  it.each(scenarios.map((scenario, index) => [scenario.label, index] as const))(
    '%s: admits exactly the limit',
    async (_label, index) => {
      const results = await gateways.run(index)
      expect(results.map((r) => r.errors)).toEqual(results.map(() => 0))
      expect(results.reduce((sum, r) => sum + r.admitted, 0)).toBe(scenarios[index]!.expected)
    },
  )
}

describe.skipIf(!redisAvailable)(`${GATEWAYS} gateway processes on one Redis`, () => {
  suite(() => ({ url: REDIS_URL }))
  afterAll(() => removeTestKeys())
})

describe.skipIf(!redisServerBinary)(`${GATEWAYS} gateway processes on a Redis Cluster`, () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startRedisCluster(3)
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })
  suite(() => ({ ports: cluster.nodes.map((node) => node.port) }))
})
