// The Redis store on a real Redis Cluster of three masters, started here from the redis-server
// binary, through ioredis Cluster and node-redis createCluster.
import { fixedWindow, slidingLog, slidingWindow, tokenBucket } from '@tollgate/core'
import { type Charge, reservable } from '@tollgate/core/store'
import { type RedisScriptClient, redisScripts, redisStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { expectSameAsMemory, settleTraceArb, settlingArb } from './support/settle-trace.js'
import { describeStore } from './support/store-suite.js'
import { ioredisClusterTarget, nodeRedisClusterTarget, type Target } from './support/targets.js'
import { AWKWARD_KEYS, ONE_OF_EACH } from './support/trace.js'

/** Counts the script calls a store makes: the round trips of a request. */
function counting(client: RedisScriptClient) {
  const counter = {
    calls: 0,
    shas: [] as string[],
    client: {
      cluster: client.cluster,
      evalsha: (sha, keys, args) => {
        counter.calls++
        counter.shas.push(sha)
        return client.evalsha(sha, keys, args)
      },
      eval: (source, keys, args) => {
        counter.calls++
        return client.eval(source, keys, args)
      },
    } satisfies RedisScriptClient,
  }
  return counter
}

/**
 * The stores' call deadlines, on a time that never moves: nothing here tests a timeout, and on a
 * loaded machine a call to the cluster may take longer than the default budget (250 ms) to
 * answer, which would fail it.
 */
const deadlines = manualTime()

describe.skipIf(!redisServerBinary)('Redis store on a Redis Cluster (3 masters)', () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startRedisCluster(3)
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })
  const ports = () => cluster.nodes.map((node) => node.port)

  it('puts every rule of one identity in one slot, whatever the key holds', async () => {
    const target = await ioredisClusterTarget(ports())
    try {
      const store = redisStore({ client: target.client })
      for (const key of AWKWARD_KEYS) {
        const slots = await Promise.all(
          ['per-ip', 'login{x}', 'a:b'].map((rule) =>
            target.command(undefined, ['CLUSTER', 'KEYSLOT', store.keyOf(rule, key)]),
          ),
        )
        expect(new Set(slots).size).toBe(1)
      }
    } finally {
      await target.close()
    }
  })

  // Both layouts: a key per rule, and one value per identity (on one client).
  describe.each([
    ['ioredis Cluster', 'rule', ioredisClusterTarget],
    ['node-redis createCluster', 'rule', nodeRedisClusterTarget],
    ['ioredis Cluster', 'identity', ioredisClusterTarget],
  ] as const)('through %s, layout %s', (name, layout, connect) => {
    let target: Target
    beforeAll(async () => {
      target = await connect(ports())
    })
    afterAll(async () => {
      await target?.close()
    })
    const store = (client: RedisScriptClient = target.client) =>
      redisStore({
        client,
        time: 'caller',
        prefix: uniquePrefix('cluster'),
        expiryMarginMs: 600_000,
        layout,
        deadlines,
      })

    describeStore(`Redis Cluster through ${name}, layout ${layout}`, {
      create: () => store(),
      traceRuns: 60,
    })

    it('makes one round trip for any number of rules on one identity', async () => {
      const counter = counting(target.client)
      const s = store(counter.client)
      const charges: Charge[] = ONE_OF_EACH.map((algorithm, i) => ({
        rule: `rule-${i}`,
        algorithm,
        key: 'api_key:k_1',
        cost: 1,
        shadow: false,
      }))
      await s.consume(charges, 1_000) // the first call may load the scripts
      counter.calls = 0
      const outcome = await s.consume(charges, 1_000)
      expect(outcome.decisions.every((d) => d.allowed)).toBe(true)
      expect(counter.calls).toBe(1)
      // Every key in one slot: the script made for these rules, not the general one.
      expect(counter.shas.at(-1)).not.toBe(redisScripts.consume.sha)
      expect(s.scripts().map((script) => script.sha)).toContain(counter.shas.at(-1))
    })

    it('penalises a request on one identity in one round trip, and answers each operator call in one', async () => {
      const counter = counting(target.client)
      const s = store(counter.client)
      const penalty = { blockMs: 60_000, factor: 2, maxBlockMs: 600_000, forgetAfterMs: 3_600_000 }
      const charges: Charge[] = ONE_OF_EACH.slice(0, 3).map((algorithm, i) => ({
        rule: `penalised-${i}`,
        algorithm,
        key: 'api_key:k_3',
        cost: 1,
        shadow: false,
        penalty,
      }))
      await s.consumePenalised(charges, 1_000) // the first call may load the script
      counter.calls = 0
      await s.consumePenalised(charges, 1_000)
      expect(counter.calls).toBe(1)
      const ref = { rule: 'penalised-0', algorithm: charges[0]!.algorithm, key: 'api_key:k_3' }
      await s.block(ref, penalty, 90_000, 1_000)
      const status = await s.peek(ref, penalty, 1_000)
      expect(status.offences).toEqual({ count: 0, blockedUntil: 90_000 })
      await s.unblock(ref, 1_000)
      await s.reset(ref, 1_000)
      expect(counter.calls).toBe(5)
    })

    // A request whose identities lie in two slots is decided per slot group: a block in one
    // refuses the request, and what the other group wrote is given back (consumeAcrossSlots).
    it('refuses a penalised request across slots when one slot’s key is blocked, giving the other back', async () => {
      const s = store()
      const penalty = { blockMs: 60_000, factor: 2, maxBlockMs: 600_000, forgetAfterMs: 3_600_000 }
      const window = fixedWindow({ limit: 10, windowMs: 60_000 })
      const keys = ['api_key:k_4', 'ip:203.0.113.9']
      const slots = await Promise.all(
        keys.map((key) => target.command(undefined, ['CLUSTER', 'KEYSLOT', s.keyOf('w', key)])),
      )
      expect(new Set(slots).size).toBe(2)
      const login: Charge = {
        rule: 'login',
        algorithm: window,
        key: keys[0]!,
        cost: 1,
        shadow: false,
        penalty,
      }
      const other: Charge = { rule: 'w', algorithm: window, key: keys[1]!, cost: 3, shadow: false }
      await s.block({ rule: 'login', algorithm: window, key: keys[0]! }, penalty, 70_000, 10_000)
      const refused = await s.consumePenalised([login, other], 10_000)
      expect(refused.offences).toEqual([{ count: 0, blockedUntil: 70_000 }, undefined])
      const after = await s.consume(
        [
          { ...other, cost: 0 },
          { ...login, cost: 0, penalty: undefined },
        ],
        10_000,
      )
      expect(after.decisions.map((d) => d.remaining)).toEqual([10, 10])
      // Once the block is over, the request passes in both slots.
      const passed = await s.consumePenalised([login, other], 70_000)
      expect([passed.decisions.map((d) => d.allowed), passed.offences]).toEqual([
        [true, true],
        [{ count: 0, blockedUntil: 70_000 }, undefined],
      ])
    })

    it('settles a request of any number of rules on one identity in one round trip', async () => {
      const counter = counting(target.client)
      const s = store(counter.client)
      const charges: Charge[] = ONE_OF_EACH.map((algorithm, i) => ({
        rule: `settled-${i}`,
        algorithm: reservable(algorithm),
        key: 'api_key:k_2',
        cost: 5,
        shadow: false,
      }))
      await s.consume(charges, 1_000)
      counter.calls = 0
      await s.settle(
        charges.map((c, i) => ({ ...c, actual: i % 2 === 0 ? 2 : 9 })),
        1_000,
        1_000,
      )
      expect(counter.calls).toBeLessThanOrEqual(2) // the settle script may be loaded first
      expect(counter.shas.at(-1)).toBe(redisScripts.settle.sha)
      counter.calls = 0
      await s.settle(
        charges.map((c) => ({ ...c, cost: 2, actual: 1 })),
        1_000,
        1_000,
      )
      expect(counter.calls).toBe(1)
      const after = await s.consume(
        charges.map((c) => ({ ...c, cost: 0 })),
        1_000,
      )
      // 20 each, 5 reserved, then 2 or 9, then 1 of those 2 given back.
      expect(after.decisions.map((d) => d.remaining)).toEqual(
        charges.map((_, i) => (i % 2 === 0 ? 19 : 12)),
      )
    })

    it('settles rules on identities of different slots as the memory store does', async () => {
      await fc.assert(
        fc.asyncProperty(settleTraceArb(settlingArb), (trace) =>
          expectSameAsMemory(store(), trace, { acrossSlots: true }),
        ),
        { numRuns: 40 },
      )
    })

    it('across slots, a denial anywhere leaves every other rule as it was', async () => {
      const counter = counting(target.client)
      const s = store(counter.client)
      const tight = tokenBucket({ rate: 1, burst: 1 })
      const roomy = tokenBucket({ rate: 1, burst: 10 })
      const keys = ['ip:203.0.113.7', 'api_key:k_1', 'user:42', 'user:43']
      const slots = await Promise.all(
        keys.map((key) => target.command(undefined, ['CLUSTER', 'KEYSLOT', s.keyOf('r', key)])),
      )
      expect(new Set(slots).size).toBe(keys.length)
      await s.consume(
        [{ rule: 'tight', algorithm: tight, key: keys[0]!, cost: 1, shadow: false }],
        0,
      )
      const request: Charge[] = [
        { rule: 'roomy', algorithm: roomy, key: keys[1]!, cost: 3, shadow: false },
        { rule: 'tight', algorithm: tight, key: keys[0]!, cost: 1, shadow: false },
        { rule: 'roomy', algorithm: roomy, key: keys[2]!, cost: 2, shadow: false },
        { rule: 'watch', algorithm: roomy, key: keys[3]!, cost: 4, shadow: true },
      ]
      const denied = await s.consume(request, 0)
      expect(denied.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 10],
        [false, 0],
        [true, 10],
        [true, 10],
      ])
      // Nothing was kept: the whole allowance is still there on every other identity.
      const after = await s.consume(
        request.filter((c) => c.rule !== 'tight'),
        0,
      )
      expect(after.decisions.map((d) => d.remaining)).toEqual([7, 8, 6])
    })

    // Another caller's clock ahead of this one (or another process's later server time) leaves
    // a window state holding charges in the next window; a charge made there must come back
    // from there when a later slot denies.
    describe.each([
      ['fixed window', fixedWindow],
      ['sliding window', slidingWindow],
      ['sliding log', slidingLog],
    ] as const)('%s across slots', (_, make) => {
      const windowMs = 60_000
      const window = make({ limit: 10, windowMs })
      const tight = tokenBucket({ rate: 1, burst: 1 })
      const keys = ['api_key:k_1', 'ip:203.0.113.7', 'user:42']
      const charge = (rule: string, key: string, cost: number): Charge => ({
        rule,
        algorithm: rule === 'tight' ? tight : window,
        key,
        cost,
        shadow: false,
      })
      const request = [
        charge('w', keys[0]!, 3),
        charge('tight', keys[1]!, 1),
        charge('w', keys[2]!, 2),
      ]
      const inspect = [charge('w', keys[0]!, 0), charge('w', keys[2]!, 0)]

      it.each(['caller', 'server'] as const)(
        'gives back exactly what it charged (%s clock)',
        async (time) => {
          const prefix = uniquePrefix('cluster-refund')
          const ahead = redisStore({
            client: target.client,
            time: 'caller',
            prefix,
            expiryMarginMs: 600_000,
            layout,
            deadlines,
          })
          const s = redisStore({
            client: target.client,
            time,
            prefix,
            expiryMarginMs: 600_000,
            layout,
            deadlines,
          })
          const slots = await Promise.all(
            keys.map((key) => target.command(undefined, ['CLUSTER', 'KEYSLOT', s.keyOf('w', key)])),
          )
          expect(new Set(slots).size).toBe(keys.length)
          // The caller's clock sits just before a window boundary; with the server's, its time.
          let now = 59 * windowMs - 1_000
          if (time === 'server') {
            const [seconds, micros] = (await target.command(undefined, ['TIME'])) as string[]
            now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
          }
          // Ahead by less than a window, into the next one: not a step the state corrects.
          const later = now - (now % windowMs) + windowMs
          await ahead.consume([charge('w', keys[0]!, 1)], later)
          await s.consume([charge('tight', keys[1]!, 1)], now)
          const denied = await s.consume(request, now)
          expect(denied.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
            [true, 9],
            [false, 0],
            [true, 10],
          ])
          const after = await ahead.consume(inspect, later)
          expect(after.decisions.map((d) => d.remaining)).toEqual([9, 10])
        },
      )
    })
  })
})
