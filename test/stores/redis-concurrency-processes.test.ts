// Four gateway processes share concurrency limits through Redis, on one node and on a Redis
// Cluster: never more than the limit held at once, every slot given back exactly, a request
// another rule denies holds no slot, and the slots of processes killed while holding them come
// back after the lease time.
import { concurrency, tokenBucket } from '@tollgate/core'
import { redisStore } from '@tollgate/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Gateways, LEASE_MS, type Scenario, startGateways } from './support/gateways.js'
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js'
import {
  REDIS_URL,
  redisAvailable,
  redisServerBinary,
  removeTestKeys,
  uniquePrefix,
} from './support/redis-env.js'
import { ioredisClusterTarget, ioredisTarget, type Target } from './support/targets.js'

const GATEWAYS = 4
const LIMIT = 5
const ATTEMPTS = 30 // per gateway, 4 at a time: 16 requests in flight for 5 slots
const BURST = 40 // the token bucket beside the slots: fewer than the 120 attempts
const CALLER_NOW = 1_000_000
const SLOTS = 'ip:203.0.113.7'
const TOKENS = 'api_key:k_1' // another identity: another slot on a cluster

function scenariosFor(prefix: string) {
  const slots = (id: string) => ({
    id,
    key: SLOTS,
    algorithm: { name: 'concurrency' as const, limit: LIMIT },
  })
  const release = (probe: string) => ({
    probe: `${prefix}:probe:${probe}`,
    afterwards: 'release' as const,
  })
  const scenarios: (Scenario & { readonly label: string })[] = [
    {
      label: "the caller's clock",
      rules: [slots('slots-caller')],
      attempts: ATTEMPTS,
      inFlight: 4,
      now: CALLER_NOW,
      hold: release('caller'),
    },
    {
      label: "the server's clock",
      rules: [slots('slots-server')],
      attempts: ATTEMPTS,
      inFlight: 4,
      now: 'server',
      hold: release('server'),
    },
    {
      label: 'slots and a token bucket on another identity, charged together',
      rules: [
        slots('slots-beside'),
        {
          id: 'tokens-beside',
          key: TOKENS,
          algorithm: { name: 'token_bucket', rate: 1, periodMs: 3_600_000, burst: BURST },
        },
      ],
      attempts: ATTEMPTS,
      inFlight: 4,
      now: CALLER_NOW,
      hold: release('beside'),
    },
    {
      label: 'processes that die holding their slots',
      rules: [{ ...slots('slots-killed'), algorithm: { name: 'concurrency', limit: GATEWAYS } }],
      attempts: 2,
      inFlight: 1,
      now: CALLER_NOW,
      hold: { probe: `${prefix}:probe:killed`, afterwards: 'keep' },
    },
  ]
  return scenarios
}

type Topology = {
  readonly name: string
  readonly skip: boolean
  readonly start: () => Promise<{
    readonly target: Target
    readonly connection: { readonly url: string } | { readonly ports: readonly number[] }
    readonly stop: () => Promise<void>
  }>
}

const topologies: readonly Topology[] = [
  {
    name: 'one node',
    skip: !redisAvailable,
    start: async () => ({
      target: await ioredisTarget(REDIS_URL),
      connection: { url: REDIS_URL },
      stop: () => removeTestKeys(),
    }),
  },
  {
    name: 'a Redis Cluster of three masters',
    skip: !redisServerBinary,
    start: async () => {
      const cluster: RedisCluster = await startRedisCluster(3)
      const ports = cluster.nodes.map((node) => node.port)
      return {
        target: await ioredisClusterTarget(ports),
        connection: { ports },
        stop: () => cluster.stop(),
      }
    },
  },
]

describe.each(topologies)(
  `${GATEWAYS} gateway processes holding concurrency slots on $name`,
  (topology) => {
    const prefix = uniquePrefix('conc-procs')
    const scenarios = scenariosFor(prefix)
    let gateways: Gateways
    let target: Target
    let stop: () => Promise<void>
    beforeAll(async () => {
      if (topology.skip) return
      const started = await topology.start()
      target = started.target
      stop = started.stop
      gateways = await startGateways(GATEWAYS, {
        connection: started.connection,
        prefix,
        scenarios,
      })
    }, 60_000)
    afterAll(async () => {
      await gateways?.close()
      await target?.close()
      await stop?.()
    })
    const zcard = (store: ReturnType<typeof redisStore>, rule: string) => {
      const key = store.keyOf(rule, SLOTS)
      return target.command(key, ['ZCARD', key])
    }

    it.skipIf(topology.skip).each([0, 1, 2])(
      'scenario %i: never more than the limit at once, every slot back at the end',
      async (index) => {
        const scenario = scenarios[index]!
        const results = await gateways.run(index)
        expect(results.map((r) => r.errors)).toEqual(results.map(() => 0))
        expect(Math.max(...results.map((r) => r.mostHeld))).toBeLessThanOrEqual(LIMIT)
        const admitted = results.reduce((sum, r) => sum + r.admitted, 0)
        // Slots are used again once given back: far more than the limit got through.
        expect(admitted).toBeGreaterThan(LIMIT)
        const store = redisStore({ client: target.client, prefix })
        expect(await zcard(store, scenario.rules[0]!.id)).toBe(0)
        const probe = scenario.hold!.probe
        expect(Number(await target.command(probe, ['GET', probe]))).toBe(0)
        if (scenario.rules.length === 2) {
          // All or nothing: the tokens taken are exactly the admitted requests'.
          expect(admitted).toBeLessThanOrEqual(BURST)
          const caller = redisStore({ client: target.client, prefix, time: 'caller' })
          const seen = await caller.consume(
            [
              {
                rule: 'tokens-beside',
                algorithm: tokenBucket({ rate: 1, periodMs: 3_600_000, burst: BURST }),
                key: TOKENS,
                cost: 0,
                shadow: false,
              },
            ],
            CALLER_NOW,
          )
          expect(seen.decisions[0]!.remaining).toBe(BURST - admitted)
        }
      },
      120_000,
    )

    it.skipIf(topology.skip)(
      "gives killed processes' slots back after the lease time",
      async () => {
        const results = await gateways.run(3)
        expect(results.reduce((sum, r) => sum + r.admitted, 0)).toBe(GATEWAYS)
        await gateways.kill()
        const store = redisStore({ client: target.client, prefix, time: 'caller' })
        const charge = (cost: number) => ({
          rule: 'slots-killed',
          algorithm: concurrency({ limit: GATEWAYS }),
          key: SLOTS,
          cost,
          shadow: false,
        })
        const before = await store.consume([charge(1)], CALLER_NOW + LEASE_MS - 1)
        expect(before.decisions[0]).toMatchObject({ allowed: false, remaining: 0 })
        const after = await store.consume([charge(GATEWAYS)], CALLER_NOW + LEASE_MS)
        expect(after.decisions[0]).toMatchObject({ allowed: true, remaining: 0 })
        await store.refund([charge(GATEWAYS)], after.at, after.at)
        expect(await zcard(store, 'slots-killed')).toBe(0)
      },
      60_000,
    )
  },
)
