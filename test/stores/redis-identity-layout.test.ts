// One key per identity (`layout: 'identity'`): the states of every rule keyed on one identity
// in one value, each with its own deadline. What every store does is the conformance suite's;
// the layout's decisions are checked against the reference by redis-differential.test.ts, its
// batches by redis-coalesce.test.ts, its processes by redis-processes.test.ts, its slots by
// redis-cluster.test.ts. Here: where states live, how the value expires, what it holds.
import { createHash } from 'node:crypto'
import {
  concurrency,
  fixedWindow,
  gcra,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { type Charge, RateLimitError } from '@tollgate/core/store'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { referenceStore } from '@tollgate/test-utils'
import { type RedisServer, startRedisServer } from '@tollgate/test-utils/redis-server'
import { Redis } from 'ioredis'
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

const charge = (rule: string, algorithm: Charge['algorithm'], key = 'ip:203.0.113.7'): Charge => ({
  rule,
  algorithm,
  key,
  cost: 1,
  shadow: false,
})

/** A rule's field in the identity value: the first 4 bytes of the SHA-1 of its id. */
const fieldOf = (rule: string) => createHash('sha1').update(rule).digest().readUInt32LE(0)

/** One entry of an identity value: field, deadline (6 bytes), the state's length, the state. */
function entry(rule: string, deadline: number, state: Buffer): Buffer {
  const head = Buffer.alloc(11)
  head.writeUInt32LE(fieldOf(rule), 0)
  head.writeUIntLE(deadline, 4, 6)
  head.writeUInt8(state.length, 10)
  return Buffer.concat([head, state])
}

/** The entries of an identity value, by field. */
function entries(value: Buffer): Map<number, { deadline: number; state: Buffer }> {
  const found = new Map<number, { deadline: number; state: Buffer }>()
  for (let at = 0; at < value.length; ) {
    const length = value.readUInt8(at + 10)
    found.set(value.readUInt32LE(at), {
      deadline: value.readUIntLE(at + 4, 6),
      state: value.subarray(at + 11, at + 11 + length),
    })
    at += 11 + length
  }
  return found
}

/** A fixed window's state as its own key would hold it: tag 4, start, count (doubles). */
function fixedWindowState(start: number, count: number): Buffer {
  const state = Buffer.alloc(17)
  state.writeUInt8(4, 0)
  state.writeDoubleLE(start, 1)
  state.writeDoubleLE(count, 9)
  return state
}

describe.skipIf(!redisAvailable)('Redis store, one key per identity', () => {
  let target: Target
  let raw: Redis
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
    raw = new Redis(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    raw?.disconnect()
    await removeTestKeys()
  })
  const serverTime = async () => {
    const [seconds, micros] = (await raw.time()) as [number, number]
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }
  const store = (name: string, options: { time?: 'caller' | 'server'; margin?: number } = {}) =>
    redisStore({
      client: target.client,
      prefix: uniquePrefix(name),
      time: options.time ?? 'caller',
      expiryMarginMs: options.margin ?? 600_000,
      timeoutMs: 10_000,
      layout: 'identity',
    })

  describeStore('Redis single node, one key per identity', { create: () => store('suite') })

  it('keeps every rule of an identity in one key, but concurrency and sliding-log rules, under the same hash tag', async () => {
    const prefix = uniquePrefix('where')
    const s = redisStore({ client: target.client, prefix, time: 'caller', layout: 'identity' })
    const rules = [
      charge('per-second', tokenBucket({ rate: 10, burst: 20 })),
      charge('per-minute', gcra({ rate: 100, periodMs: 60_000, burst: 100 })),
      charge('per-day', fixedWindow({ limit: 1000, windowMs: 86_400_000 })),
      charge('smooth', slidingWindow({ limit: 50, windowMs: 60_000 })),
      charge('log', slidingLog({ limit: 5, windowMs: 60_000 })),
      charge('slots', concurrency({ limit: 2 })),
    ]
    const outcome = await s.consume(rules, 1_000_000)
    expect(outcome.decisions.every((d) => d.allowed)).toBe(true)
    const keys = (await raw.keys(`${prefix}*`)).sort()
    expect(keys).toEqual([
      `${prefix}:log:{ip:203.0.113.7}`,
      `${prefix}:slots:{ip:203.0.113.7}`,
      `${prefix}:{ip:203.0.113.7}`,
    ])
    expect(s.keyOf('per-day', 'ip:203.0.113.7')).toBe(`${prefix}:{ip:203.0.113.7}`)
    const value = entries((await raw.getBuffer(`${prefix}:{ip:203.0.113.7}`))!)
    expect([...value.keys()].sort()).toEqual(
      ['per-second', 'per-minute', 'per-day', 'smooth'].map(fieldOf).sort(),
    )
  })

  it('expires the value with its longest-lived state, each entry at its own (server clock)', async () => {
    const s = store('expiry', { time: 'server', margin: 0 })
    const minute = fixedWindow({ limit: 10, windowMs: 60_000 })
    const day = fixedWindow({ limit: 10, windowMs: 86_400_000 })
    const { at } = await s.consume([charge('minute', minute), charge('day', day)], 0)
    const key = s.keyOf('day', 'ip:203.0.113.7')
    const endOf = (windowMs: number) => at - (at % windowMs) + windowMs
    expect(await raw.pexpiretime(key)).toBe(endOf(86_400_000))
    const value = entries((await raw.getBuffer(key))!)
    expect(value.get(fieldOf('minute'))!.deadline).toBe(endOf(60_000))
    expect(value.get(fieldOf('day'))!.deadline).toBe(endOf(86_400_000))
  })

  it("with the caller's clock, deadlines are the server's time plus the time to freshness and the margin", async () => {
    const s = store('expiry-caller', { margin: 5000 })
    const before = await serverTime()
    // 4 tokens at 10 per second refill in 400 ms.
    await s.consume([{ ...charge('bucket', tokenBucket({ rate: 10, burst: 20 })), cost: 4 }], 1_000)
    const after = await serverTime()
    const key = s.keyOf('bucket', 'ip:203.0.113.7')
    const { deadline } = entries((await raw.getBuffer(key))!).get(fieldOf('bucket'))!
    expect(deadline).toBeGreaterThanOrEqual(before + 5_400)
    expect(deadline).toBeLessThanOrEqual(after + 5_400)
    expect(await raw.pexpiretime(key)).toBe(deadline)
  })

  it('reads a state whose deadline has come as absent, drops it, and carries the live states of other rules over', async () => {
    const s = store('stale')
    const key = s.keyOf('a', 'ip:203.0.113.7')
    const now = await serverTime()
    const window = fixedWindow({ limit: 2, windowMs: 3_600_000 })
    // Full windows for `a` (deadline passed) and for `b`, and one of a rule this request does
    // not charge (`c`, live) and of one long gone (`d`).
    const full = fixedWindowState(0, 2)
    await raw.set(
      key,
      Buffer.concat([
        entry('a', now - 1, full),
        entry('b', now + 600_000, full),
        entry('c', now + 600_000, full),
        entry('d', now - 10, full),
      ]),
      'PX',
      600_000,
    )
    const outcome = await s.consume([charge('a', window), charge('b', window)], 1_000)
    // `a` starts afresh; `b` is full: the request is denied, and nothing is written.
    expect(outcome.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [false, 0],
    ])
    const admitted = await s.consume([charge('a', window)], 1_000)
    expect(admitted.decisions.map((d) => d.remaining)).toEqual([1])
    const value = entries((await raw.getBuffer(key))!)
    expect([...value.keys()].sort()).toEqual(['a', 'b', 'c'].map(fieldOf).sort())
    expect(value.get(fieldOf('c'))!.state).toEqual(full)
    // The request's rules are taken from the value once: one field each.
    expect((await s.consume([charge('c', window)], 1_000)).decisions[0]!.allowed).toBe(false)
  })

  // A value of the length a request's own entries make, holding other entries (found by the
  // differential): read entry by entry, never as the request's.
  it('reads a value of the expected length that holds other rules entry by entry', async () => {
    const s = store('same-length')
    const window = fixedWindow({ limit: 2, windowMs: 3_600_000 })
    const key = s.keyOf('a', 'ip:203.0.113.7')
    const now = await serverTime()
    // Two fixed windows make 2 × (11 + 17) = 56 bytes; so do entries of 8 and 26 bytes.
    const other = Buffer.concat([
      entry('c', now + 600_000, Buffer.alloc(8)),
      entry('d', now + 600_000, Buffer.alloc(26)),
    ])
    expect(other.length).toBe(56)
    await raw.set(key, other, 'PX', 600_000)
    const outcome = await s.consume([charge('a', window), charge('b', window)], 1_000)
    expect(outcome.decisions.map((d) => d.remaining)).toEqual([1, 1])
    const value = entries((await raw.getBuffer(key))!)
    expect([...value.keys()].sort()).toEqual(['a', 'b', 'c', 'd'].map(fieldOf).sort())
  })

  it.each([
    ['a string of no entries', 'hello'],
    [
      'an entry cut short',
      Buffer.concat([entry('a', 2 ** 47, fixedWindowState(0, 2)).subarray(0, 20)]),
    ],
  ])('reads %s under the identity key as no state, and writes over it', async (_what, foreign) => {
    const s = store('foreign')
    const window = fixedWindow({ limit: 2, windowMs: 3_600_000 })
    const key = s.keyOf('a', 'ip:203.0.113.7')
    await raw.set(key, foreign)
    for (const charges of [[charge('a', window)], [charge('a', window), charge('b', window)]]) {
      await raw.set(key, foreign)
      const outcome = await s.consume(charges, 1_000)
      expect(outcome.decisions.map((d) => d.remaining)).toEqual(charges.map(() => 1))
    }
    // The general script too (a key charged twice in one request).
    await raw.set(key, foreign)
    const twice = await s.consume([charge('a', window), charge('a', window)], 1_000)
    expect(twice.decisions.map((d) => d.allowed)).toEqual([true, true])
    expect([...entries((await raw.getBuffer(key))!).keys()]).toEqual([fieldOf('a')])
  })

  it('sends the identity key once, at its first rule, among rules that keep keys of their own', async () => {
    // Sliding logs keep a key of their own: one before the identity's rules, one between them.
    const rules = [
      slidingLog({ limit: 3, windowMs: 60_000 }),
      gcra({ rate: 5, periodMs: 1_000, burst: 4 }),
      slidingLog({ limit: 6, windowMs: 60_000 }),
      tokenBucket({ rate: 2, periodMs: 1_000, burst: 5 }),
    ]
    const sent: string[][] = []
    const client = {
      ...target.client,
      evalsha: (sha: string, keys: readonly string[], args: readonly string[]) => {
        sent.push([...keys])
        return target.client.evalsha(sha, keys, args)
      },
    }
    const prefix = uniquePrefix('places')
    const s = redisStore({ client, prefix, time: 'caller', timeoutMs: 10_000, layout: 'identity' })
    const reference = referenceStore({ dropFresh: true })
    const request = (identity: string) =>
      rules.map((algorithm, i) => charge(`r${i}`, algorithm, identity))
    const identities = ['ip:a', 'ip:b', 'ip:c']
    let denied = 0
    for (let step = 0; step < 12; step++) {
      const now = 1_700_000_000_000 + step * 150
      // Three identities together (the first alone, the other two in one batch).
      const got = await Promise.all(identities.map((id) => s.consume(request(id), now)))
      for (const [index, id] of identities.entries()) {
        const expected = await reference.consume(request(id), now)
        expect(got[index]!.decisions, `step ${step}, ${id}`).toEqual(expected.decisions)
        denied += got[index]!.decisions.filter((d) => !d.allowed).length
      }
    }
    // The limits were reached, each rule's from its own state; and requests went in batches.
    expect(denied).toBeGreaterThan(0)
    expect(sent.some((keys) => keys.length === 6)).toBe(true)
    // Each request sent three keys: the first log's, the identity's, the second log's.
    for (const keys of sent) {
      expect(keys.length % 3).toBe(0)
      for (let at = 0; at < keys.length; at += 3) {
        const identity = /\{(.*)\}$/.exec(keys[at + 1]!)![1]
        expect(keys.slice(at, at + 3)).toEqual([
          `${prefix}:r0:{${identity}}`,
          `${prefix}:{${identity}}`,
          `${prefix}:r2:{${identity}}`,
        ])
      }
    }
  })

  it('deletes the value when its last state is back to fresh', async () => {
    const s = store('fresh', { margin: 0 })
    const c = charge('bucket', tokenBucket({ rate: 10, burst: 20 }))
    const { at } = await s.consume([c], 1_000)
    expect(await raw.exists(s.keyOf(c.rule, c.key))).toBe(1)
    await s.refund([c], at, 1_000)
    expect(await raw.exists(s.keyOf(c.rule, c.key))).toBe(0)
  })

  it('keeps the counts of rules a request does not charge', async () => {
    const s = store('apart')
    const tight = fixedWindow({ limit: 2, windowMs: 60_000 })
    const roomy = gcra({ rate: 100, periodMs: 60_000, burst: 100 })
    await s.consume([charge('tight', tight), charge('roomy', roomy)], 1_000)
    await s.consume([charge('other', roomy)], 1_000)
    await s.consume([charge('other', roomy), charge('roomy', roomy)], 1_000)
    const last = await s.consume([charge('roomy', roomy), charge('tight', tight)], 1_000)
    expect(last.decisions.map((d) => d.remaining)).toEqual([97, 0])
    const over = await s.consume([charge('tight', tight)], 1_000)
    expect(over.decisions[0]!.allowed).toBe(false)
  })

  it('refuses an unknown layout, naming the option', () => {
    expect(() =>
      redisStore({
        client: ioredisClient(raw),
        layout: 'hash' as 'identity',
      }),
    ).toThrow(expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'layout' }))
  })

  // rule-107920 and rule-111101 share the first 4 bytes of their SHA-1.
  it('refuses two rules of one store that would share a field, naming the rule', () => {
    const s = store('collide')
    const window = fixedWindow({ limit: 2, windowMs: 60_000 })
    expect(fieldOf('rule-107920')).toBe(fieldOf('rule-111101'))
    return s.consume([charge('rule-107920', window)], 1_000).then(async () => {
      const refused = s.consume([charge('rule-111101', window)], 1_000)
      await expect(refused).rejects.toBeInstanceOf(RateLimitError)
      await expect(refused).rejects.toMatchObject({ rule: 'rule-111101', field: 'id' })
    })
  })
})

describe.skipIf(!redisServerBinary)(
  'Redis store, one key per identity, on a server of its own',
  () => {
    let server: RedisServer
    let raw: Redis
    beforeAll(async () => {
      server = await startRedisServer()
      raw = new Redis(server.url)
    }, 30_000)
    afterAll(async () => {
      raw?.disconnect()
      await server?.stop()
    })

    /** Calls of GET and SET the server has run so far, scripts' included. */
    async function reads(): Promise<{ get: number; set: number }> {
      const stats = (await raw.info('commandstats')) as string
      const calls = (name: string) =>
        Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0)
      return { get: calls('get'), set: calls('set') }
    }

    it.each(['server', 'caller'] as const)(
      'reads and writes one key per request of three rules on one identity (%s clock)',
      async (time) => {
        const store = redisStore({
          client: ioredisClient(raw),
          prefix: `count-${time}`,
          time,
          layout: 'identity',
        })
        const rules = [
          charge('per-second', tokenBucket({ rate: 10, burst: 20 })),
          charge('per-minute', gcra({ rate: 100, periodMs: 60_000, burst: 100 })),
          charge('per-day', slidingWindow({ limit: 1000, windowMs: 86_400_000 })),
        ]
        await store.consume(rules, 1_000_000) // loads the script
        const before = await reads()
        for (let i = 0; i < 5; i++) await store.consume(rules, 1_000_000)
        const after = await reads()
        expect({ get: after.get - before.get, set: after.set - before.set }).toEqual({
          get: 5,
          set: 5,
        })
      },
    )
  },
)
