// Several OS processes share one queue rule through Redis: the requests they admit get slots one
// emission interval apart overall, as one process would give them, on one node and on a cluster.
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

const GATEWAYS = 4
const BURST = 39 // a line of 39 and one served: 40 admitted of the 100 sent
const ATTEMPTS = 25

type QueueScenario = Scenario & {
  readonly label: string
  /** ms between two slots: the rule's period over its rate. */
  readonly intervalMs: number
  /** Excess requests served at once (the queue's `delay`). */
  readonly delay: number
  /** How far the server's clock may move during the run (0 for a fixed caller clock). */
  readonly driftMs: number
}

const queue = (rate: number, periodMs: number, delay: number) => ({
  name: 'leaky_queue' as const,
  rate,
  periodMs,
  burst: BURST,
  ...(delay === 0 ? {} : { delay }),
})

const scenarios: readonly QueueScenario[] = [
  { label: "10/s, caller's clock fixed", rate: 10, periodMs: 1000, delay: 0, now: 1_000_000 },
  {
    label: "10/s with delay 9, caller's clock fixed",
    rate: 10,
    periodMs: 1000,
    delay: 9,
    now: 1_000_000,
  },
  // One an hour: the server's clock moves a few ms during the run, far less than a slot.
  { label: "1/h, server's clock", rate: 1, periodMs: 3_600_000, delay: 0, now: 'server' as const },
].map(({ label, rate, periodMs, delay, now }) => ({
  label,
  rules: [{ id: `queue-${label}`, key: 'ip:203.0.113.7', algorithm: queue(rate, periodMs, delay) }],
  attempts: ATTEMPTS,
  inFlight: 4,
  now,
  intervalMs: periodMs / rate,
  delay,
  driftMs: now === 'server' ? 60_000 : 0,
}))

function suite(connection: () => { url: string } | { ports: readonly number[] }) {
  let gateways: Gateways
  beforeAll(async () => {
    gateways = await startGateways(GATEWAYS, {
      connection: connection(),
      prefix: uniquePrefix('queue-procs'),
      scenarios,
    })
  }, 60_000)
  afterAll(async () => {
    await gateways?.close()
  })

  it.each(scenarios.map((scenario, index) => [scenario.label, index] as const))(
    '%s: admits a full line, whose slots lie one interval apart overall',
    async (_label, index) => {
      const { intervalMs, delay, driftMs } = scenarios[index]!
      const results = await gateways.run(index)
      expect(results.map((r) => r.errors)).toEqual(results.map(() => 0))
      const delays = results.flatMap((r) => r.delays).sort((a, b) => a - b)
      expect(delays).toHaveLength(BURST + 1)
      // The i-th slot lies i intervals after the first; the first `delay` excess ones are
      // served at once. With the server's clock each wait is shorter by the time gone by.
      delays.forEach((delayMs, i) => {
        const slotMs = Math.max(0, (i - delay) * intervalMs)
        expect(delayMs).toBeLessThanOrEqual(slotMs)
        expect(delayMs).toBeGreaterThanOrEqual(slotMs - driftMs)
      })
      if (driftMs === 0) expect(new Set(delays).size).toBe(BURST + 1 - delay)
    },
  )
}

describe.skipIf(!redisAvailable)(`${GATEWAYS} gateway processes on one queue (one Redis)`, () => {
  suite(() => ({ url: REDIS_URL }))
  afterAll(() => removeTestKeys())
})

describe.skipIf(!redisServerBinary)(
  `${GATEWAYS} gateway processes on one queue (a Redis Cluster)`,
  () => {
    let cluster: RedisCluster
    beforeAll(async () => {
      cluster = await startRedisCluster(3)
    }, 60_000)
    afterAll(async () => {
      await cluster?.stop()
    })
    suite(() => ({ ports: cluster.nodes.map((node) => node.port) }))
  },
)
