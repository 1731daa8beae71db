import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ClientEvent, createClient, LocalQueueRefusedError, localLimiter } from './index.js'
import { START, setup } from './test-client.js'

describe('the closed loop: learning from the fields', () => {
  it('r=0;t=3 makes the next call to that origin wait 3 s (plus a fortieth in jitter) instead of being refused', async () => {
    const { sent, events, run } = setup([
      {
        status: 200,
        headers: { 'RateLimit-Policy': '"burst";q=10;w=60', RateLimit: '"burst";r=0;t=3' },
      },
      { status: 200 },
    ])
    await run('https://api.test/a')
    await run('https://api.test/b')
    // random 0.5 of a jitter of at most 75 ms (a fortieth of the wait): 38 ms.
    expect(sent.map((s) => s.at - START)).toEqual([0, 3038])
    expect(events).toEqual([
      {
        type: 'wait',
        reason: 'learned',
        policy: 'burst',
        delayMs: 3038,
        url: 'https://api.test/b',
      },
    ])
  })

  it('counts calls against what is left, and keeps origins and partitions apart', async () => {
    const headers = { RateLimit: '"p";r=2;t=10' }
    const { sent, run } = setup(() => ({ status: 200, headers }), {
      partition: (request) => request.headers.get('x-api-key') ?? undefined,
      maxJitterMs: 0,
    })
    await run('https://api.test/', { headers: { 'x-api-key': 'a' } }) // learns r=2 for key a
    await run('https://api.test/', { headers: { 'x-api-key': 'b' } }) // key b: nothing known yet
    await run('https://other.test/')
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 0])
    await run('https://api.test/', { headers: { 'x-api-key': 'a' } }) // r=2 → sends, server says r=2
    expect(sent.at(-1)!.at - START).toBe(0)
  })

  it('a refusal with Retry-After holds back every call to the origin', async () => {
    const { time, client, sent } = setup(
      [{ status: 429, headers: { 'Retry-After': '5' } }, { status: 200 }, { status: 200 }],
      { retry: false, maxJitterMs: 0 },
    )
    await client.fetch('https://api.test/a')
    const other = client.fetch('https://api.test/b')
    await time.runAll()
    await other
    expect(sent.map((s) => s.at - START)).toEqual([0, 5000])
    expect(time.now() - START).toBe(5000)
  })

  it('a call of cost 0 is not held back by an exhausted policy, only by a refusal', async () => {
    const { sent, run } = setup(
      [
        { status: 200, headers: { RateLimit: '"p";r=0;t=5' } },
        { status: 200 },
        { status: 429, headers: { 'Retry-After': '2' } },
        { status: 200 },
      ],
      { cost: (request) => (request.url.endsWith('/free') ? 0 : 1), retry: false, maxJitterMs: 0 },
    )
    await run('https://api.test/paid')
    await run('https://api.test/free') // r=0 does not hold a free call
    await run('https://api.test/free') // refused: Retry-After 2 s holds every call
    await run('https://api.test/free')
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 0, 2000])
  })

  it('remembers at most maxPolicies, least recently used dropped first', async () => {
    const { client, run } = setup(() => ({ status: 200, headers: { RateLimit: '"p";r=5;t=60' } }), {
      learn: { maxPolicies: 3 },
    })
    for (let i = 0; i < 10; i++) await run(`https://api${i}.test/`)
    expect(client.learnedPolicies()).toBe(3)
  })

  it('a malformed field teaches nothing and breaks nothing', async () => {
    const { client, sent, run } = setup(() => ({
      status: 200,
      headers: { RateLimit: '"p";r=-1;t=NaN', 'Retry-After': 'soon', 'X-RateLimit-Reset': 'x' },
    }))
    for (let i = 0; i < 3; i++) await run('https://api.test/')
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 0])
    expect(client.learnedPolicies()).toBe(0)
  })

  it('a throwing event listener does not break a call', async () => {
    const { sent, run } = setup(
      [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }],
      {
        onEvent: () => {
          throw new Error('metrics down')
        },
      },
    )
    expect((await run('https://api.test/')).status).toBe(200)
    expect(sent).toHaveLength(2)
  })
})

it('self-throttles with a local limiter and reports the wait', async () => {
  const time = manualTime(START)
  const limiter = localLimiter(
    { algorithm: 'token_bucket', rate: 2, period: '1s', burst: 1 },
    { clock: time.clock, timers: time.timers },
  )
  const at: number[] = []
  const events: ClientEvent[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    limiter,
    onEvent: (e) => events.push(e),
    fetch: async () => {
      at.push(time.now() - START)
      return new Response('ok')
    },
  })
  const calls = [1, 2, 3].map(() => client.fetch('https://api.test/'))
  await time.runAll()
  await Promise.all(calls)
  expect(at).toEqual([0, 500, 1000])
  expect(events.map((e) => e.type === 'wait' && [e.reason, e.delayMs])).toEqual([
    ['limiter', 500],
    ['limiter', 1000],
  ])
})

it("a queue rule spaces the client's calls by its slots and refuses past its line, sending nothing", async () => {
  const time = manualTime(START)
  const rule = { algorithm: 'leaky_queue', rate: 10, period: '1s', burst: 2 } as const
  const limiter = localLimiter(rule, { clock: time.clock, timers: time.timers })
  const at: number[] = []
  const events: ClientEvent[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    limiter,
    onEvent: (e) => events.push(e),
    fetch: async () => {
      at.push(time.now() - START)
      return new Response('ok')
    },
  })
  const calls = [1, 2, 3, 4].map(() => client.fetch('https://api.test/').catch((e: unknown) => e))
  await time.runAll()
  const outcomes = await Promise.all(calls)
  expect(at).toEqual([0, 100, 200])
  expect(outcomes[3]).toBeInstanceOf(LocalQueueRefusedError)
  expect(events.map((e) => e.type === 'wait' && [e.reason, e.delayMs])).toEqual([
    ['limiter', 100],
    ['limiter', 200],
  ])
})

it('100 concurrent fetches through one client share its limiter: at most 10 sent in any second', async () => {
  const time = manualTime(START)
  const limiter = localLimiter(
    { algorithm: 'sliding_log', limit: 10, window: '1s' },
    { clock: time.clock, timers: time.timers },
  )
  const sentAt: number[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    limiter,
    fetch: async () => {
      sentAt.push(time.now())
      return new Response('ok')
    },
  })
  const calls = Array.from({ length: 100 }, (_, i) => client.fetch(`https://api.test/${i}`))
  await time.runAll()
  expect((await Promise.all(calls)).every((r) => r.status === 200)).toBe(true)
  for (const t of sentAt)
    expect(sentAt.filter((u) => u > t - 1000 && u <= t).length).toBeLessThanOrEqual(10)
  expect(Math.max(...sentAt) - START).toBe(9000) // ten a second, no slower
  expect(time.mostPending()).toBe(1)
})

describe('a learned wait and the budget', () => {
  it('waits out any reset within the budget, whatever its jitter; sends at once past it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 120 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (t, random) => {
          const { sent, run } = setup(
            [{ status: 200, headers: { RateLimit: `"minute";r=0;t=${t}` } }, { status: 200 }],
            { random: () => random, retry: { maxTotalMs: 60_000 } },
          )
          await run('https://api.test/a')
          await run('https://api.test/b')
          const waited = sent[1]!.at - START
          if (t * 1000 <= 60_000) {
            expect(waited).toBeGreaterThanOrEqual(t * 1000)
            expect(waited).toBeLessThanOrEqual(60_000)
          } else expect(waited).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })
})
