/**
 * Settling from the response over real HTTP on every adapter, beside the scenario table
 * (scenarios/settle.ts): a streamed answer cut at any byte settles the same usage (a property
 * test), a streamed body is read as it goes, and a client that goes away before the answer
 * completes has its reservation cancelled. Nothing waits for time: the tests wait for the
 * limiter's settle and cancel calls.
 */
import {
  createLimiter,
  type Limiter,
  type RuleConfig,
  type SettleResult,
  settleFrom,
  usageReader,
} from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { APPS, type Served } from './concurrency/apps.js'
import { firstChunk, open } from './concurrency/client.js'
import { Gates } from './concurrency/gates.js'
import { T0 } from './scenarios/support.js'
import { type Client, TARGETS } from './targets.js'

const LIMIT = 100_000
/** The key of the test's client, on the IPv4 loopback. */
const CLIENT = 'ip:127.0.0.1'

const tokens = (identity: 'api_key' | 'ip'): RuleConfig => ({
  id: 'tokens',
  match: { identity },
  algorithm: 'fixed_window',
  limit: LIMIT,
  window: '1m',
  cost: 1000,
  settle: true,
})

/** Units left under `key`, read without charging (cost 0 only inspects). */
async function left(limiter: Limiter, key: string): Promise<number> {
  return (await limiter.check(key, 'tokens', { cost: 0 })).remaining
}

/** The limiter with its settle and cancel calls counted; `calls(n)` resolves after the n-th. */
function watchSettles(limiter: Limiter) {
  let count = 0
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const counted = <T>(result: T): T => {
    count++
    for (const waiter of waiters.splice(0)) {
      if (count >= waiter.n) waiter.resolve()
      else waiters.push(waiter)
    }
    return result
  }
  const watched: Limiter = Object.create(limiter, {
    settle: {
      value: (...args: Parameters<Required<Limiter>['settle']>) =>
        counted(limiter.settle!(...args)),
    },
    cancel: {
      value: (...args: Parameters<Required<Limiter>['cancel']>) =>
        counted(limiter.cancel!(...args) as SettleResult),
    },
  })
  return {
    limiter: watched,
    calls: (n: number) =>
      count >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
  }
}

describe.each(APPS)('$name: settling a streamed answer', (app) => {
  let served: Served | undefined
  afterEach(async () => {
    await served?.close()
    served = undefined
  })

  async function start(cost: (bytes: number) => number) {
    const limiter = createLimiter({ rules: [tokens('ip')], logger: false })
    const watched = watchSettles(limiter)
    const gates = new Gates()
    const settle = settleFrom((response) => cost(response.bytes))
    served = await app.start(watched.limiter, gates, { settle, legacyHeaders: true })
    return { limiter, watched, gates, port: served.port }
  }

  it('settles once the last byte is sent, from the body read as it streamed', async () => {
    const { limiter, watched, gates, port } = await start((bytes) => bytes)
    const streaming = open(port, '/stream/a')
    await firstChunk(await streaming.head)
    // Reserved: the rule's cost, as the fields said.
    expect(await left(limiter, CLIENT)).toBe(LIMIT - 1000)
    gates.open('a')
    expect((await streaming.answer).headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1000))
    await watched.calls(1)
    // "first;last": 10 bytes.
    expect(await left(limiter, CLIENT)).toBe(LIMIT - 10)
  })

  it('cancels the reservation when the client goes away before the answer completes', async () => {
    const { limiter, watched, gates, port } = await start((bytes) => bytes)
    const streaming = open(port, '/stream/b')
    await firstChunk(await streaming.head)
    expect(await left(limiter, CLIENT)).toBe(LIMIT - 1000)
    streaming.request.destroy()
    await watched.calls(1)
    expect(await left(limiter, CLIENT)).toBe(LIMIT)
    // The handler finishing afterwards settles nothing more.
    gates.open('b')
    expect(await left(limiter, CLIENT)).toBe(LIMIT)
  })
})

describe.each(TARGETS)('$name: a streamed usage cut at any byte', (target) => {
  const clock = manualClock(T0)
  let client: Client
  beforeAll(async () => {
    client = await target.start({
      rules: [tokens('api_key')],
      options: { clock, logger: false, legacyHeaders: true },
      clock,
      skip: () => false,
      refund: undefined,
      onShadowDenied: () => undefined,
      onAppError: (error) => {
        throw error
      },
      settle: settleFrom(usageReader()),
      estimate: true,
    })
  })
  afterAll(() => client.close())
  let run = 0

  it('settles the usage of the last event, wherever the body is cut', async () => {
    // The state is read from the next request's fields: reserving nothing (an estimate of 0),
    // it shows what the key has left after the settle.
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 420 }), { maxLength: 12 }),
        fc.integer({ min: 10, max: 5000 }),
        async (cuts, total) => {
          const key = `k_${target.name.length}_${run++}`
          const sent = await client.send({
            method: 'POST',
            path: `/llm/sse/${total}`,
            headers: {
              'x-api-key': key,
              'x-test-estimate': '8000',
              'x-test-split': cuts.join(','),
            },
          })
          expect(sent.status).toBe(200)
          expect(sent.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 8000))
          const next = await client.send({
            method: 'GET',
            path: '/',
            headers: { 'x-api-key': key, 'x-test-estimate': '0' },
          })
          expect(next.headers['x-ratelimit-remaining']).toBe(String(LIMIT - total))
        },
      ),
      { numRuns: 25 },
    )
  })
})
