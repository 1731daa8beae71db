// Four gateway processes on a Redis Cluster send requests whose rules land in three slots, the
// tightest last: every request the last slot denies must give back what it charged on the
// others, so each rule ends up holding exactly the admitted requests, no more.
import { fixedWindow, slidingLog, slidingWindow } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Gateways, type Scenario, startGateways } from './support/gateways.js'
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { ioredisClusterTarget, type Target } from './support/targets.js'

const GATEWAYS = 4
const ATTEMPTS = 25 // per gateway: 100 requests in all
// A day, so that the server's clock stays in one fixed window while the test runs.
const WINDOW_MS = 86_400_000
const LIMITS = [40, 30, 20] as const // on three identities, in three slots; the last binds
const KEYS = ['api_key:k_1', 'ip:203.0.113.7', 'user:42'] as const
const NAMES = ['fixed_window', 'sliding_window', 'sliding_log'] as const
const MAKE = { fixed_window: fixedWindow, sliding_window: slidingWindow, sliding_log: slidingLog }
const CALLER_NOW = 1_000_000
const SKEW_MS = 1_000

const scenarios: readonly (Scenario & { readonly label: string; readonly name: string })[] =
  NAMES.flatMap((name) =>
    (['server', 'skewed'] as const).map((clock) => ({
      label: `${name}, ${clock === 'server' ? "the server's clock" : 'skewed caller clocks'}`,
      name,
      rules: LIMITS.map((limit, i) => ({
        id: `${name}-${clock}-${limit}`,
        key: KEYS[i]!,
        algorithm: { name, limit, windowMs: WINDOW_MS },
      })),
      attempts: ATTEMPTS,
      inFlight: 4,
      now: clock === 'server' ? ('server' as const) : CALLER_NOW,
      skewMs: SKEW_MS,
    })),
  )

describe.skipIf(!redisServerBinary)(`${GATEWAYS} gateway processes, rules in three slots`, () => {
  const prefix = uniquePrefix('procs-slots')
  let cluster: RedisCluster
  let gateways: Gateways
  let target: Target
  beforeAll(async () => {
    cluster = await startRedisCluster(3)
    const ports = cluster.nodes.map((node) => node.port)
    target = await ioredisClusterTarget(ports)
    gateways = await startGateways(GATEWAYS, { connection: { ports }, prefix, scenarios })
  }, 60_000)
  afterAll(async () => {
    await gateways?.close()
    await target?.close()
    await cluster?.stop()
  })

  it('puts the three identities in three slots', async () => {
    const store = redisStore({ client: target.client, prefix })
    const slots = await Promise.all(
      KEYS.map((key) => target.command(undefined, ['CLUSTER', 'KEYSLOT', store.keyOf('r', key)])),
    )
    expect(new Set(slots).size).toBe(KEYS.length)
  })

  it.each(scenarios.map((scenario, index) => [scenario.label, index] as const))(
    '%s: admits the tightest limit and every rule holds exactly that',
    async (_label, index) => {
      const scenario = scenarios[index]!
      const results = await gateways.run(index)
      expect(results.map((r) => r.errors)).toEqual(results.map(() => 0))
      const admitted = results.reduce((sum, r) => sum + r.admitted, 0)
      expect(admitted).toBe(LIMITS[2])
      // What each rule holds, seen at the latest clock any gateway used (cost 0 only looks).
      const server = scenario.now === 'server'
      const store = redisStore({
        client: target.client,
        prefix,
        time: server ? 'server' : 'caller',
      })
      const inspect: Charge[] = scenario.rules.map((rule, i) => ({
        rule: rule.id,
        algorithm: MAKE[scenario.name as (typeof NAMES)[number]]({
          limit: LIMITS[i]!,
          windowMs: WINDOW_MS,
        }),
        key: rule.key,
        cost: 0,
        shadow: false,
      }))
      const seen = await store.consume(inspect, CALLER_NOW + (GATEWAYS - 1) * SKEW_MS)
      expect(seen.decisions.map((d) => d.remaining)).toEqual(
        LIMITS.map((limit) => limit - admitted),
      )
    },
  )
})
