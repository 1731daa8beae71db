// Rules changed while running, and per-client figures, on a Redis Cluster: each key's state
// carries its version and figures within its own slot, so the scripts carry it in the same call
// as on one node.
import { redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import {
  carryTraceArb,
  expectSameCarryAsMemory,
  FAMILIES,
  type Family,
  STRATEGIES,
} from './support/carry-trace.js'
import { expectSameFiguresAsMemory, figuresTraceArb } from './support/figures-trace.js'
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { describeRollout } from './support/rollout.js'
import { ioredisClusterTarget, nodeRedisClusterTarget, type Target } from './support/targets.js'

vi.setConfig({ testTimeout: 120_000 })

describe.skipIf(!redisServerBinary)(
  'rules changed while running, on a Redis Cluster (3 masters)',
  () => {
    let cluster: RedisCluster
    beforeAll(async () => {
      cluster = await startRedisCluster(3)
    }, 60_000)
    afterAll(async () => {
      await cluster?.stop()
    })
    const ports = () => cluster.nodes.map((node) => node.port)

    describeRollout('two processes on one Cluster', () => ioredisClusterTarget(ports()))

    describe.each([
      ['ioredis', ioredisClusterTarget],
      ['node-redis', nodeRedisClusterTarget],
    ] as const)('through %s', (_name, connect) => {
      let target: Target
      beforeAll(async () => {
        target = await connect(ports())
      })
      afterAll(async () => {
        await target?.close()
      })

      it.each(['rule', 'identity'] as const)(
        'carries every family by every strategy exactly as the memory store (layout %s)',
        async (layout) => {
          await fc.assert(
            fc.asyncProperty(
              fc
                .constantFrom(...(Object.keys(FAMILIES) as Family[]))
                .chain((family) => carryTraceArb(family, undefined, 4)),
              (trace) =>
                expectSameCarryAsMemory(
                  redisStore({
                    client: target.client,
                    time: 'caller',
                    prefix: uniquePrefix('carry-cluster'),
                    expiryMarginMs: 600_000,
                    timeoutMs: 10_000,
                    layout,
                  }),
                  trace,
                ),
            ),
            { numRuns: 40 },
          )
        },
      )

      it.each(['rule', 'identity'] as const)(
        'carries keys between per-client figures exactly as the memory store (layout %s)',
        async (layout) => {
          await fc.assert(
            fc.asyncProperty(
              fc.constantFrom(...(Object.keys(FAMILIES) as Family[])).chain(figuresTraceArb),
              fc.constantFrom(...STRATEGIES),
              (trace, strategy) =>
                expectSameFiguresAsMemory(
                  redisStore({
                    client: target.client,
                    time: 'caller',
                    prefix: uniquePrefix('figures-cluster'),
                    expiryMarginMs: 600_000,
                    timeoutMs: 10_000,
                    layout,
                  }),
                  strategy,
                  trace,
                ),
            ),
            { numRuns: 40 },
          )
        },
      )
    })
  },
)
