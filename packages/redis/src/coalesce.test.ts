import { type Charge, fixedWindow, gcra } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import type { RedisScriptClient } from './client.js'
import { redisStore } from './redis-store.js'

const rule = gcra({ rate: 10, periodMs: 1000, burst: 5 })
const request = (key: string): Charge[] => [
  { rule: 'r', algorithm: rule, key, cost: 1, shadow: false },
]

/** A client that records each call's keys and answers every request "allowed, 4 left". */
function recordingClient(fail?: Error) {
  const calls: string[][] = []
  const client: RedisScriptClient = {
    evalsha: async (_sha, keys) => {
      calls.push([...keys])
      if (fail !== undefined) throw fail
      return [1_800_000_000_000, ...keys.flatMap(() => [1, 4, 100, 0])]
    },
    eval: () => Promise.reject(new Error('unexpected EVAL')),
  }
  return { client, calls }
}

describe('one-rule requests made together', () => {
  it('go out in one call per turn of the event loop, and each gets its own answer', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p' })
    const first = await Promise.all(['a', 'b', 'a'].map((key) => store.consume(request(key), 0)))
    const second = await store.consume(request('c'), 0)
    expect(calls).toEqual([['p:r:{a}', 'p:r:{b}', 'p:r:{a}'], ['p:r:{c}']])
    for (const outcome of [...first, second]) {
      expect(outcome).toEqual({
        decisions: [
          { allowed: true, remaining: 4, limit: 5, resetAfterMs: 100, retryAfterMs: undefined },
        ],
        at: 1_800_000_000_000,
      })
    }
  })

  it('of several rules go out in one call per rule set, keys and costs in request order', async () => {
    const calls: { keys: string[]; args: string[] }[] = []
    const client: RedisScriptClient = {
      evalsha: async (_sha, keys, args) => {
        calls.push({ keys: [...keys], args: [...args] })
        // Per request: the first rule allowed (4 left), the second denied (retry in 250 ms).
        return [
          1_800_000_000_000,
          ...keys.flatMap((_, i) => (i % 2 ? [0, 0, 500, 250] : [1, 4, 100, 0])),
        ]
      },
      eval: () => Promise.reject(new Error('unexpected EVAL')),
    }
    const store = redisStore({ client, prefix: 'p' })
    const daily = fixedWindow({ limit: 9, windowMs: 86_400_000 })
    const twoRules = (key: string, cost: number): Charge[] => [
      ...request(key),
      { rule: 'day', algorithm: daily, key, cost, shadow: false },
    ]
    const outcomes = await Promise.all([
      store.consume(twoRules('a', 2), 0),
      store.consume(request('a'), 0),
      store.consume(twoRules('b', 3), 0),
    ])
    expect(calls).toEqual([
      { keys: ['p:r:{a}', 'p:day:{a}', 'p:r:{b}', 'p:day:{b}'], args: ['1', '2', '1', '3'] },
      { keys: ['p:r:{a}'], args: ['1'] },
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
    const store = redisStore({ client, prefix: 'p' })
    const settled = await Promise.allSettled(
      ['a', 'b'].map((key) => store.consume(request(key), 0)),
    )
    expect(settled).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ code: 'ERR_RL_STORE_UNAVAILABLE' }) },
      { status: 'rejected', reason: expect.objectContaining({ code: 'ERR_RL_STORE_UNAVAILABLE' }) },
    ])
  })

  it('refuses a coalesce option that is not a boolean, at start-up', () => {
    const { client } = recordingClient()
    expect(() => redisStore({ client, coalesce: 'yes' as never })).toThrow(
      /redisStore coalesce: expected true or false/,
    )
  })
})
