import { type Charge, gcra } from '@tollgate/core'
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
