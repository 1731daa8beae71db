// The Redis store against a real server: keys, expiry, scripts by SHA, state size, bad input.
import { gcra, tokenBucket } from '@tollgate/core'
import { type AlgorithmName, type Charge, isRateLimitError } from '@tollgate/core/store'
import { type RedisScriptClient, redisScripts, redisStore } from '@tollgate/redis'
import { referenceStore } from '@tollgate/test-utils'
import { startRedisServer } from '@tollgate/test-utils/redis-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  REDIS_URL,
  redisAvailable,
  redisServerBinary,
  removeTestKeys,
  uniquePrefix,
} from './support/redis-env.js'
import { describeStore } from './support/store-suite.js'
import { ioredisTarget, type Target } from './support/targets.js'
import { AWKWARD_KEYS, LOWERED, ONE_OF_EACH } from './support/trace.js'

const charge = (algorithm: Charge['algorithm'], key = 'ip:203.0.113.7', cost = 1): Charge => ({
  rule: `rule-${algorithm.name}`,
  algorithm,
  key,
  cost,
  shadow: false,
})

describe.skipIf(!redisAvailable)('Redis store on a single node', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })
  const command = (...args: string[]) => target.command(undefined, args)

  describeStore('Redis single node', {
    // The caller's clock, and nothing expiring on the server's while a trace runs on its own.
    // The contract is about decisions, not deadlines: a loaded machine must not fail it by a
    // call slower than the default 250 ms (the timeouts have tests of their own, on driven time).
    create: () =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('suite'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
      }),
  })

  it('keeps every awkward key apart, inside one hash tag, and short', async () => {
    const store = redisStore({ client: target.client, prefix: 'tg', layout: 'rule' })
    const keys = AWKWARD_KEYS.map((key) => store.keyOf('login{per}ip', key))
    expect(new Set(keys).size).toBe(AWKWARD_KEYS.length)
    for (const key of keys) {
      // Exactly one '{' and one '}', the tag running to the end: nothing can move the slot.
      expect(key.match(/[{}]/g)).toEqual(['{', '}'])
      expect(key.endsWith('}')).toBe(true)
      expect(key.length).toBeLessThan(80)
    }
    expect(store.keyOf('login-per-ip', 'ip:203.0.113.7')).toBe('tg:login-per-ip:{ip:203.0.113.7}')
    // The default layout: one key per identity, whatever the rule.
    const byIdentity = redisStore({ client: target.client, prefix: 'tg' })
    expect(byIdentity.keyOf('login-per-ip', 'ip:203.0.113.7')).toBe('tg:{ip:203.0.113.7}')
  })

  it('writes nothing for a denied request, on any rule', async () => {
    const store = redisStore({ client: target.client, prefix: uniquePrefix('deny') })
    const tight = tokenBucket({ rate: 1, burst: 1 })
    await store.consume([{ ...charge(tight, 'a') }], 0)
    const outcome = await store.consume(
      [charge(tight, 'a'), ...ONE_OF_EACH.map((a) => charge(a, 'b'))],
      0,
    )
    expect(outcome.decisions[0]?.allowed).toBe(false)
    // The would-pass charges are reported at cost 0: everything left.
    expect(outcome.decisions.slice(1).map((d) => d.remaining)).toEqual(
      ONE_OF_EACH.map((a) => a.limit),
    )
    for (const algorithm of ONE_OF_EACH) {
      expect(await command('EXISTS', store.keyOf(`rule-${algorithm.name}`, 'b'))).toBe(0)
    }
  })

  it("expires each key exactly when its state is fresh again, on the server's clock", async () => {
    // A key per rule: each key holds one state (the identity layout's key lives as long as the
    // latest of its entries; see redis-identity-layout.test.ts).
    const store = redisStore({ client: target.client, prefix: uniquePrefix('ttl'), layout: 'rule' })
    for (const algorithm of ONE_OF_EACH) {
      const c = charge(algorithm, 'k', 3)
      const { at } = await store.consume([c], 0)
      // The same request through the reference store, at the time Redis used.
      const reference = referenceStore()
      await reference.consume([c], at)
      const state = reference.states.get(`${c.rule}\u0000${c.key}`)!
      const freshAt = algorithm.freshAt(state, 0)
      expect(freshAt).toBeGreaterThan(at)
      expect(await command('PEXPIRETIME', store.keyOf(c.rule, c.key))).toBe(freshAt)
    }
  })

  it("with the caller's clock, expires after the time to freshness plus the margin", async () => {
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('ttl-caller'),
      time: 'caller',
      expiryMarginMs: 5000,
    })
    const c = charge(tokenBucket({ rate: 10, burst: 20 }), 'k', 4)
    await store.consume([c], 1_000)
    // 4 tokens at 10 per second refill in 400 ms.
    const ttl = (await command('PTTL', store.keyOf(c.rule, c.key))) as number
    expect(ttl).toBeLessThanOrEqual(5_400)
    expect(ttl).toBeGreaterThan(5_000)
  })

  it('deletes a key whose state is back to fresh instead of keeping it', async () => {
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('fresh'),
      time: 'caller',
    })
    const c = charge(tokenBucket({ rate: 10, burst: 20 }), 'k', 1)
    const { at } = await store.consume([c], 1_000)
    expect(await command('EXISTS', store.keyOf(c.rule, c.key))).toBe(1)
    await store.refund([c], at, 1_000)
    expect(await command('EXISTS', store.keyOf(c.rule, c.key))).toBe(0)
  })

  // The SHAs themselves are pinned beside the checked-in scripts (packages/redis/lua).
  it('calls scripts by the SHA1s Redis computes', async () => {
    for (const script of Object.values(redisScripts)) {
      expect(await command('SCRIPT', 'LOAD', script.source)).toBe(script.sha)
    }
  })

  // SCRIPT FLUSH runs on a server of its own: the shared Redis may be serving other tests.
  it.skipIf(!redisServerBinary)(
    'recovers from SCRIPT FLUSH: the source is sent once, then the SHA again',
    async () => {
      const server = await startRedisServer()
      const own = await ioredisTarget(server.url)
      try {
        const calls: string[] = []
        const client: RedisScriptClient = {
          evalsha: (sha, keys, args) => {
            calls.push('evalsha')
            return own.client.evalsha(sha, keys, args)
          },
          eval: (source, keys, args) => {
            calls.push('eval')
            return own.client.eval(source, keys, args)
          },
        }
        const store = redisStore({ client, prefix: uniquePrefix('flush'), time: 'caller' })
        const c = charge(tokenBucket({ rate: 1, burst: 3 }), 'k')
        expect((await store.consume([c], 0)).decisions[0]?.remaining).toBe(2)
        await own.command(undefined, ['SCRIPT', 'FLUSH'])
        expect((await store.consume([c], 0)).decisions[0]?.remaining).toBe(1)
        expect((await store.consume([c], 0)).decisions[0]?.remaining).toBe(0)
        // First call: not cached yet. After the flush: once more. Otherwise by SHA.
        expect(calls).toEqual(['evalsha', 'eval', 'evalsha', 'eval', 'evalsha'])
        expect([store.scriptLoads, store.scriptReloads]).toEqual([1, 1])
      } finally {
        await own.close()
        await server.stop()
      }
    },
  )

  it('treats state left by another algorithm under the same rule as no state', async () => {
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('switch'),
      time: 'caller',
    })
    // Every algorithm has room for 20: a fresh state answers 19 after one request. Alone (the
    // one-rule script), beside another charge (a rule-set script), and charged twice in one
    // request (the general script).
    for (const [i, before] of ONE_OF_EACH.entries()) {
      for (const [j, after] of ONE_OF_EACH.entries()) {
        if (i === j) continue
        const key = `k${i}-${j}`
        await store.consume([{ ...charge(before, key), rule: 'same' }], 0)
        const alone = await store.consume([{ ...charge(after, key), rule: 'same' }], 0)
        expect(alone.decisions[0]?.remaining, `${after.name} after ${before.name}`).toBe(19)
        await store.consume([{ ...charge(before, `${key}b`), rule: 'same' }], 0)
        const together = await store.consume(
          [{ ...charge(after, `${key}b`), rule: 'same' }, charge(ONE_OF_EACH[0]!, `${key}c`)],
          0,
        )
        expect(together.decisions[0]?.remaining, `${after.name} after ${before.name}`).toBe(19)
        await store.consume([{ ...charge(before, `${key}d`), rule: 'same' }], 0)
        const twice = { ...charge(after, `${key}d`), rule: 'same' }
        const general = await store.consume([twice, twice], 0)
        expect(general.decisions[0]?.remaining, `${after.name} after ${before.name}`).toBe(19)
      }
    }
  })

  it('denies with nothing remaining when a lowered limit finds more used than it allows, never less than nothing', async () => {
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('lowered'),
      time: 'caller',
    })
    for (const [before, after] of LOWERED) {
      const used = { ...charge(before), rule: 'lowered', cost: 15 }
      expect((await store.consume([used], 0)).decisions[0]?.allowed).toBe(true)
      const next = await store.consume([{ ...used, algorithm: after, cost: 1 }], 0)
      // A token bucket keeps what is left rather than what was used: 5 tokens, all spendable.
      const expected =
        after.name === 'token_bucket'
          ? { allowed: true, remaining: 4, limit: 5 }
          : { allowed: false, remaining: 0, limit: 5 }
      expect(next.decisions[0], after.name).toMatchObject(expected)
      // Cost 0 only inspects: it passes, even over the lowered limit.
      const inspect = await store.consume([{ ...used, algorithm: after, cost: 0 }], 0)
      expect(inspect.decisions[0], after.name).toMatchObject({ allowed: true, limit: 5 })
    }
  })

  it("denies with nothing remaining when the caller's clock is behind the stored time", async () => {
    const store = redisStore({
      client: target.client,
      prefix: uniquePrefix('behind'),
      time: 'caller',
    })
    const algorithm = gcra({ rate: 10, burst: 20 })
    const burst = { ...charge(algorithm), cost: 20 }
    expect((await store.consume([burst], 1_000_000)).decisions[0]?.allowed).toBe(true)
    // Another gateway, 50 ms behind: the bucket looks more than full to it.
    const behind = await store.consume([{ ...burst, cost: 1 }], 1_000_000 - 50)
    expect(behind.decisions[0]).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('keeps a compact state: one small value per key (MEMORY USAGE)', async () => {
    // A key per rule (the identity layout's value is measured in redis-identity-layout.test.ts).
    const store = redisStore({ client: target.client, prefix: 'tg', layout: 'rule' })
    const sizes: Partial<Record<AlgorithmName, number>> = {}
    for (const algorithm of ONE_OF_EACH) {
      const c = {
        ...charge(algorithm, `ip:198.51.100.${ONE_OF_EACH.indexOf(algorithm)}`),
        rule: 'per-ip',
      }
      await store.consume([c], 0)
      const key = store.keyOf(c.rule, c.key)
      sizes[algorithm.name] = (await command('MEMORY', 'USAGE', key, 'SAMPLES', '0')) as number
      await command('DEL', key)
    }
    // The floor: a plain counter (what INCR + PEXPIRE limiters keep) under a key as long.
    const counter = store.keyOf('per-ip', 'ip:198.51.100.9')
    await command('SET', counter, '1', 'PX', '60000')
    const floor = (await command('MEMORY', 'USAGE', counter, 'SAMPLES', '0')) as number
    await command('DEL', counter)
    // GCRA's one integer lives inside the key's object header, like the counter's.
    expect(sizes.gcra).toBe(floor)
    // The others are one short string: a few numbers, no per-field overhead.
    // So is a short sliding log: a tag byte and one timestamp here.
    for (const name of [
      'token_bucket',
      'leaky_bucket',
      'fixed_window',
      'sliding_window',
      'sliding_log',
    ] as const) {
      expect(sizes[name]).toBeLessThanOrEqual(floor + 32)
    }
  })

  it('refuses what it cannot run, with a clear error', async () => {
    const store = redisStore({ client: target.client, prefix: uniquePrefix('bad') })
    const custom = {
      ...tokenBucket({ rate: 1, burst: 1 }),
      name: 'token_bucket' as const,
      params: undefined,
    }
    await expect(store.consume([charge(custom)], 0)).rejects.toMatchObject({
      code: 'ERR_RL_INVALID_RULE',
      field: 'algorithm',
    })
    await expect(
      store.consume([charge(tokenBucket({ rate: 1, burst: 2 }), 'k', 3)], 0),
    ).rejects.toMatchObject({
      code: 'ERR_RL_COST_EXCEEDS_CAPACITY',
    })
    await expect(
      store.consume([charge(tokenBucket({ rate: 1, burst: 2 }), 'k', 1.5)], 0),
    ).rejects.toMatchObject({
      code: 'ERR_RL_INVALID_COST',
    })
    expect(() => redisStore({ client: target.client, prefix: 'a{b}' })).toThrow(/prefix/)
    expect(() => redisStore({ client: target.client, timeoutMs: 0 })).toThrow(/timeoutMs/)
    expect(() => redisStore({ client: {} as RedisScriptClient })).toThrow(/client/)
    const clock = { now: () => 0 }
    expect(() => redisStore({ client: target.client, deadlines: { clock } as never })).toThrow(
      /deadlines\.timers: expected \{ setTimeout, clearTimeout \}/,
    )
  })

  it('reports a reply that is not a decision as ERR_RL_STORE_REPLY', async () => {
    // A real server answering with something else: a client that runs another script.
    const foreign: RedisScriptClient = {
      evalsha: (_sha, keys, args) =>
        target.client.eval("return { 'not', 'a', 'decision' }", keys, args),
      eval: (_source, keys, args) =>
        target.client.eval("return { 'not', 'a', 'decision' }", keys, args),
    }
    const store = redisStore({ client: foreign, prefix: uniquePrefix('foreign') })
    const error = await store
      .consume([charge(tokenBucket({ rate: 1, burst: 1 }))], 0)
      .catch((e) => e)
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_STORE_REPLY')
  })
})
