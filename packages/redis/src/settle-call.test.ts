// What the Redis store sends for a settle, on a client that records calls (no server): checks
// first, one call (one per slot on a cluster), the actual cost in the shadow flag's place, the
// reply checked, and the call's deadline.
import { concurrency, fixedWindow, leakyQueue, tokenBucket } from '@tollgate/core'
import { type Algorithm, reservable, type Settlement } from '@tollgate/core/store'
import { manualTime } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import type { RedisScriptClient } from './client.js'
import { redisStore } from './redis-store.js'
import { redisScripts } from './scripts/index.js'

const bucket = reservable(tokenBucket({ rate: 10, burst: 20 }))
const month = reservable(fixedWindow({ limit: 100, calendar: 'month' }))

const settlement = (
  algorithm: Algorithm,
  key: string,
  cost: number,
  actual: number,
  rule = `r-${algorithm.name}`,
): Settlement => ({ rule, algorithm, key, cost, actual, shadow: false })

/** Records each call and answers as the settle script does: the number of charges settled. */
function recordingClient(cluster = false, reply?: (keys: readonly string[]) => unknown) {
  const calls: { sha: string; keys: string[]; args: string[] }[] = []
  const client: RedisScriptClient = {
    evalsha: async (sha, keys, args) => {
      calls.push({ sha, keys: [...keys], args: [...args] })
      return reply === undefined ? keys.length : reply(keys)
    },
    eval: () => Promise.reject(new Error('unexpected EVAL')),
    cluster,
  }
  return { client, calls }
}

describe('RedisStore.settle', () => {
  it('sends a request’s settlements in one call of the settle script, actual costs in place', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p', layout: 'rule', time: 'caller' })
    await store.settle(
      [settlement(bucket, 'ip:1', 5, 2), settlement(bucket, 'api_key:k', 5, 9, 'other')],
      1_000,
      1_500,
    )
    expect(calls).toHaveLength(1)
    const [call] = calls
    expect(call!.sha).toBe(redisScripts.settle.sha)
    expect(call!.keys).toEqual(['p:r-token_bucket:{ip:1}', 'p:other:{api_key:k}'])
    // now, margin, the time charged; then per charge code, charged, actual, p1 … p5, field.
    expect(call!.args.slice(0, 3)).toEqual(['1500', '1000', '1000'])
    expect(call!.args.slice(3, 6)).toEqual(['1', '5', '2'])
    expect(call!.args.slice(13, 16)).toEqual(['1', '5', '9'])
  })

  it('sends a calendar window’s charge as the start of its window, as a refund does', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p', time: 'caller' })
    const chargedAt = Date.UTC(2030, 4, 17, 12)
    await store.settle(
      [settlement(month, 'ip:1', 5, 2), settlement(bucket, 'ip:1', 5, 9)],
      chargedAt,
      chargedAt + 1,
    )
    expect(calls[0]!.args[2]).toBe(`${Date.UTC(2030, 4, 1)} ${chargedAt}`)
  })

  it('makes no call for settlements that change nothing', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p' })
    await store.settle([settlement(bucket, 'ip:1', 5, 5)], 0, 0)
    await store.settle([], 0, 0)
    expect(calls).toHaveLength(0)
  })

  it('on a cluster, makes one call per slot', async () => {
    const { client, calls } = recordingClient(true)
    const store = redisStore({ client, prefix: 'p', time: 'caller' })
    await store.settle(
      [
        settlement(bucket, 'ip:1', 5, 2),
        settlement(month, 'ip:1', 5, 9),
        settlement(bucket, 'api_key:k', 5, 0, 'per-key'),
      ],
      0,
      0,
    )
    expect(calls.map((call) => call.keys)).toEqual([['p:{ip:1}', 'p:{ip:1}'], ['p:{api_key:k}']])
  })

  it('refuses a rule that cannot settle, or a bad actual cost, naming the field, before any call', async () => {
    const { client, calls } = recordingClient()
    const store = redisStore({ client, prefix: 'p' })
    const good = settlement(bucket, 'ip:1', 5, 2)
    for (const algorithm of [leakyQueue({ rate: 1, burst: 2 }), concurrency({ limit: 2 })]) {
      await expect(
        store.settle([good, settlement(algorithm, 'ip:1', 1, 0)], 0, 0),
      ).rejects.toMatchObject({ code: 'ERR_RL_INVALID_RULE', field: 'settle' })
    }
    for (const actual of [-1, 1.5, Number.NaN]) {
      await expect(store.settle([good, { ...good, actual }], 0, 0)).rejects.toMatchObject({
        code: 'ERR_RL_INVALID_COST',
        field: 'actual',
      })
    }
    expect(calls).toHaveLength(0)
  })

  it('reports a reply that is not the count settled as ERR_RL_STORE_REPLY', async () => {
    const { client } = recordingClient(false, () => 'OK')
    const store = redisStore({ client, prefix: 'p' })
    await expect(store.settle([settlement(bucket, 'ip:1', 5, 2)], 0, 0)).rejects.toMatchObject({
      code: 'ERR_RL_STORE_REPLY',
    })
  })

  it('fails with ERR_RL_STORE_UNAVAILABLE when no answer comes within timeoutMs', async () => {
    const deadlines = manualTime()
    const client: RedisScriptClient = {
      evalsha: () => new Promise(() => {}),
      eval: () => new Promise(() => {}),
    }
    const store = redisStore({ client, prefix: 'p', timeoutMs: 100, deadlines })
    const settled = store.settle([settlement(bucket, 'ip:1', 5, 2)], 0, 0)
    const outcome = settled.then(
      () => 'settled',
      (error: unknown) => error,
    )
    await deadlines.advance(99)
    await deadlines.advance(1)
    expect(await outcome).toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE' })
  })
})
