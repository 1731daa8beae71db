import { fixedWindow, gcra } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import type { RedisScriptClient } from './client.js'
import { redisStore } from './redis-store.js'

const rule = gcra({ rate: 10, periodMs: 1000, burst: 5 })
const request = (key: string): Charge[] => [
  { rule: 'r', algorithm: rule, key, cost: 1, shadow: false },
]

/** A client that records each call's keys and answers every request "allowed, 4 left". */
/**
 * Answers "allowed" for every cost sent (on the server's clock the arguments are the costs, one
 * per rule of each request), after the time.
 */
function recordingClient(fail?: Error) {
  const calls: string[][] = []
  const shas: string[] = []
  const client: RedisScriptClient = {
    evalsha: async (sha, keys, args) => {
      calls.push([...keys])
      shas.push(sha)
      if (fail !== undefined) throw fail
      return [1_800_000_000_000, ...args.flatMap(() => [4, 100])]
    },
    eval: () => Promise.reject(new Error('unexpected EVAL')),
  }
  return { client, calls, shas }
}

describe('one-rule requests made together', () => {
  it('go out alone while nothing of their rule set is on its way, else in one call per turn', async () => {
    const { client, calls, shas } = recordingClient()
    const store = redisStore({ client, prefix: 'p', layout: 'rule' })
    const first = await Promise.all(['a', 'b', 'a'].map((key) => store.consume(request(key), 0)))
    const second = await store.consume(request('c'), 0)
    // The first goes at once; the two behind it wait for the end of the turn, together.
    expect(calls).toEqual([['p:r:{a}'], ['p:r:{b}', 'p:r:{a}'], ['p:r:{c}']])
    // A call of one request runs the script shaped for one; a batch the batch script.
    expect(shas[0]).toBe(shas[2])
    expect(shas[1]).not.toBe(shas[0])
    for (const outcome of [...first, second]) {
      expect(outcome).toEqual({
        decisions: [
          { allowed: true, remaining: 4, limit: 5, resetAfterMs: 100, retryAfterMs: undefined },
        ],
        at: 1_800_000_000_000,
      })
    }
  })

  it('on a client that auto-pipelines, go out together at the end of the tick, none alone ahead of them', async () => {
    const { client, calls, shas } = recordingClient()
    const store = redisStore({
      client: { ...client, autoPipelining: true },
      prefix: 'p',
      layout: 'rule',
    })
    let settled = 0
    const first = Promise.all(
      ['a', 'b', 'a'].map((key) => store.consume(request(key), 0).then(() => settled++)),
    )
    // Nothing leaves before the end of the tick…
    expect(calls).toEqual([])
    await first
    // …and then everything made in it leaves in one call, in order.
    expect(calls).toEqual([['p:r:{a}', 'p:r:{b}', 'p:r:{a}']])
    expect(settled).toBe(3)
    // A lone request leaves in its tick too, through the script shaped for one request.
    await store.consume(request('c'), 0)
    expect(calls).toEqual([['p:r:{a}', 'p:r:{b}', 'p:r:{a}'], ['p:r:{c}']])
    expect(shas[1]).not.toBe(shas[0])
  })

  it('wait behind a call whose script Redis may not hold, so a NOSCRIPT retry keeps its place', async () => {
    // Redis holds every script but the one the first call runs; its NOSCRIPT comes back late.
    const executed: string[] = []
    let answerNoScript = () => {}
    let first = true
    const reply = (keys: readonly string[]) => {
      executed.push(...keys)
      return [1_800_000_000_000, ...keys.flatMap(() => [4, 100])]
    }
    const client: RedisScriptClient = {
      evalsha: (_sha, keys) => {
        if (!first) return Promise.resolve(reply(keys))
        first = false
        return new Promise((_resolve, reject) => {
          answerNoScript = () => reject(new Error('NOSCRIPT No matching script.'))
        })
      },
      eval: async (_source, keys) => reply(keys),
    }
    const store = redisStore({ client, prefix: 'p', layout: 'rule' })
    const all = Promise.all(['a', 'b', 'c'].map((key) => store.consume(request(key), 0)))
    await new Promise((resolve) => setImmediate(resolve))
    // The end of the turn came and went: nothing was sent behind the cold call.
    expect(executed).toEqual([])
    answerNoScript()
    await all
    expect(executed).toEqual(['p:r:{a}', 'p:r:{b}', 'p:r:{c}'])
    // Once a script has answered, batches go out behind its calls again, at the end of the turn.
    const later = Promise.all(['d', 'e'].map((key) => store.consume(request(key), 0)))
    await new Promise((resolve) => setImmediate(resolve))
    expect(executed.slice(3)).toEqual(['p:r:{d}', 'p:r:{e}'])
    await later
  })

  it('of several rules go out in one call per rule set, keys and costs in request order', async () => {
    const calls: { keys: string[]; args: string[] }[] = []
    const client: RedisScriptClient = {
      evalsha: async (_sha, keys, args) => {
        calls.push({ keys: [...keys], args: [...args] })
        // Per request: the first rule allowed (4 left), the second denied (retry in 250 ms).
        return [1_800_000_000_000, ...keys.flatMap((_, i) => (i % 2 ? [-1, 500, 250] : [4, 100]))]
      },
      eval: () => Promise.reject(new Error('unexpected EVAL')),
    }
    const store = redisStore({ client, prefix: 'p', layout: 'rule' })
    const daily = fixedWindow({ limit: 9, windowMs: 86_400_000 })
    const twoRules = (key: string, cost: number): Charge[] => [
      ...request(key),
      { rule: 'day', algorithm: daily, key, cost, shadow: false },
    ]
    const outcomes = await Promise.all([
      store.consume(twoRules('c', 1), 0),
      store.consume(twoRules('a', 2), 0),
      store.consume(request('a'), 0),
      store.consume(twoRules('b', 3), 0),
    ]).then((all) => all.slice(1))
    expect(calls).toEqual([
      { keys: ['p:r:{c}', 'p:day:{c}'], args: ['1', '1'] },
      { keys: ['p:r:{a}'], args: ['1'] },
      { keys: ['p:r:{a}', 'p:day:{a}', 'p:r:{b}', 'p:day:{b}'], args: ['1', '2', '1', '3'] },
    ])
    expect(outcomes[0]!.decisions).toEqual([
      { allowed: true, remaining: 4, limit: 5, resetAfterMs: 100, retryAfterMs: undefined },
      { allowed: false, remaining: 0, limit: 9, resetAfterMs: 500, retryAfterMs: 250 },
    ])
    expect(outcomes[2]!.decisions).toEqual(outcomes[0]!.decisions)
    expect(outcomes[1]!.decisions).toHaveLength(1)
  })

  it('all fail with ERR_RL_STORE_UNAVAILABLE when their call fails', async () => {
    const { client } = recordingClient(new Error('connect ECONNREFUSED'))
    const store = redisStore({ client, prefix: 'p', layout: 'rule' })
    const settled = await Promise.allSettled(
      ['a', 'b'].map((key) => store.consume(request(key), 0)),
    )
    expect(settled).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ code: 'ERR_RL_STORE_UNAVAILABLE' }) },
      { status: 'rejected', reason: expect.objectContaining({ code: 'ERR_RL_STORE_UNAVAILABLE' }) },
    ])
  })

  it('send a request that arrives once its rule set has no call on its way at once', async () => {
    let answer: (() => void) | undefined
    const calls: string[][] = []
    const client: RedisScriptClient = {
      evalsha: (_sha, keys) => {
        calls.push([...keys])
        return new Promise((resolve) => {
          answer = () => resolve([1_800_000_000_000, ...keys.flatMap(() => [4, 100])])
        })
      },
      eval: () => Promise.reject(new Error('unexpected EVAL')),
    }
    const store = redisStore({ client, prefix: 'p', layout: 'rule' })
    const lone = store.consume(request('a'), 0)
    // Sent before the turn ends: nothing else was on its way.
    expect(calls).toEqual([['p:r:{a}']])
    const behind = store.consume(request('b'), 0)
    expect(calls).toHaveLength(1)
    answer!()
    await lone
    await new Promise(setImmediate)
    expect(calls).toEqual([['p:r:{a}'], ['p:r:{b}']])
    answer!()
    await behind
    const later = store.consume(request('c'), 0)
    expect(calls).toHaveLength(3)
    answer!()
    await later
  })

  it('refuses a coalesce option that is not a boolean, at start-up', () => {
    const { client } = recordingClient()
    expect(() => redisStore({ client, coalesce: 'yes' as never })).toThrow(
      /redisStore coalesce: expected true or false/,
    )
  })
})

describe('batches in the identity layout', () => {
  it('are sized by the keys a request reads: 32 requests of three rules in one identity value a call', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p', layout: 'identity' })
    const rules = [
      gcra({ rate: 10, periodMs: 1000, burst: 5 }),
      gcra({ rate: 100, periodMs: 60_000, burst: 100 }),
      fixedWindow({ limit: 1000, windowMs: 86_400_000 }),
    ]
    const threeRules = (key: string): Charge[] =>
      rules.map((algorithm, i) => ({ rule: `r${i}`, algorithm, key, cost: 1, shadow: false }))
    const keys = Array.from({ length: 41 }, (_, i) => `ip:${i}`)
    const outcomes = await Promise.all(keys.map((key) => store.consume(threeRules(key), 0)))
    expect(outcomes.every((outcome) => outcome.decisions.every((d) => d.allowed))).toBe(true)
    // One request ahead alone, then 32 a call; each request sends its identity's key once.
    expect(calls.map((keysOfCall) => keysOfCall.length)).toEqual([1, 32, 8])
    expect(calls[1]!.slice(0, 2)).toEqual(['p:{ip:1}', 'p:{ip:2}'])
  })
})
