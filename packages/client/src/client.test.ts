import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ClientEvent, type ClientOptions, createClient, localLimiter } from './index.js'
import { manualTime } from './test-timers.js'

const START = 1_700_000_000_000
type Answer = { status: number; headers?: Record<string, string> }

/** A client whose fetch answers from a script and records when each request was sent. */
function setup(
  answers: Answer[] | ((sent: number) => Answer),
  options: Partial<ClientOptions> = {},
) {
  const time = manualTime(START)
  const sent: Array<{ at: number; method: string; body: string }> = []
  const events: ClientEvent[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
    fetch: async (request) => {
      sent.push({ at: time.now(), method: request.method, body: await request.text() })
      const answer =
        typeof answers === 'function' ? answers(sent.length) : answers[sent.length - 1]!
      return new Response('', { status: answer.status, headers: answer.headers })
    },
  })
  /** Runs a call to completion, moving the clock through every wait it makes. */
  const run = async (input: string, init?: RequestInit) => {
    const pending = client.fetch(input, init)
    await time.runAll()
    return pending
  }
  return { time, client, sent, events, run }
}

describe('retrying refusals', () => {
  it('waits Retry-After plus jitter within [0, min(1 s, wait)], then succeeds', async () => {
    const { sent, events, run } = setup([
      { status: 429, headers: { 'Retry-After': '3' } },
      { status: 200 },
    ])
    const response = await run('https://api.test/v1/items')
    expect(response.status).toBe(200)
    expect(sent.map((s) => s.at - START)).toEqual([0, 3000 + 500])
    expect(events).toEqual([
      {
        type: 'retry',
        reason: 'retry-after',
        policy: undefined,
        status: 429,
        attempt: 2,
        delayMs: 3500,
        url: 'https://api.test/v1/items',
      },
    ])
  })

  it('the jitter never makes a retry early, and is at most the bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 120 }),
        async (r, seconds) => {
          const { sent, run } = setup(
            [{ status: 503, headers: { 'Retry-After': String(seconds) } }, { status: 200 }],
            { random: () => r, retry: { maxTotalMs: 200_000 } },
          )
          await run('https://api.test/')
          const waited = sent[1]!.at - sent[0]!.at
          expect(waited).toBeGreaterThanOrEqual(seconds * 1000)
          expect(waited).toBeLessThanOrEqual(seconds * 1000 + Math.min(1000, seconds * 1000))
        },
      ),
      { numRuns: 50 },
    )
  })

  it("uses an exhausted policy's t when there is no Retry-After, and full-jitter backoff when neither", async () => {
    const { sent, events, run } = setup(
      [
        { status: 429, headers: { RateLimit: '"burst";r=0;t=2' } },
        { status: 503 },
        { status: 200 },
      ],
      { learn: false },
    )
    await run('https://api.test/')
    expect(sent.map((s) => s.at - START)).toEqual([0, 2500, 2500 + 500])
    expect(events.map((e) => e.type === 'retry' && [e.reason, e.policy, e.delayMs])).toEqual([
      ['policy', 'burst', 2500],
      // backoff for retry 2: uniform in [0, 500 × 2] with random 0.5 → 500
      ['backoff', undefined, 500],
    ])
  })

  it('caps attempts and total time, returning the last refusal', async () => {
    const refusal = { status: 429, headers: { 'Retry-After': '1' } }
    const capped = setup(() => refusal, { retry: { attempts: 2 } })
    expect((await capped.run('https://api.test/')).status).toBe(429)
    expect(capped.sent).toHaveLength(2)
    expect(capped.events.at(-1)).toMatchObject({ type: 'give-up', reason: 'attempts' })

    const slow = setup([{ status: 429, headers: { 'Retry-After': '120' } }])
    const response = await slow.run('https://api.test/')
    expect(response.headers.get('retry-after')).toBe('120')
    expect(slow.sent).toHaveLength(1)
    expect(slow.events).toEqual([
      { type: 'give-up', reason: 'time', status: 429, url: 'https://api.test/' },
    ])
  })

  it('repeats only safe methods, unless an Idempotency-Key is sent or the caller opts in', async () => {
    const refusedOnce = () => [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 201 }]
    const post = setup(refusedOnce())
    expect((await post.run('https://api.test/', { method: 'POST', body: 'x' })).status).toBe(429)
    expect(post.events).toEqual([
      { type: 'give-up', reason: 'method', status: 429, url: 'https://api.test/' },
    ])

    const keyed = setup(refusedOnce())
    const init = { method: 'POST', body: 'payload', headers: { 'Idempotency-Key': 'k1' } }
    expect((await keyed.run('https://api.test/', init)).status).toBe(201)
    expect(keyed.sent.map((s) => s.body)).toEqual(['payload', 'payload']) // the body is sent again

    const optedIn = setup(refusedOnce(), { retry: { unsafeMethods: true } })
    expect((await optedIn.run('https://api.test/', { method: 'PATCH', body: 'p' })).status).toBe(
      201,
    )
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']) {
      expect((await setup(refusedOnce()).run('https://api.test/', { method })).status).toBe(201)
    }
  })

  it("honours the caller's signal while waiting: rejects with its reason, sends nothing more", async () => {
    const { time, client, sent } = setup([
      { status: 429, headers: { 'Retry-After': '30' } },
      { status: 200 },
    ])
    const controller = new AbortController()
    const pending = client.fetch('https://api.test/', { signal: controller.signal })
    await time.advance(10_000)
    controller.abort(new Error('user left'))
    await expect(pending).rejects.toThrow('user left')
    await time.runAll()
    expect(sent).toHaveLength(1)
    expect(time.pending()).toBe(0)
  })

  it('refuses bad options, naming them', () => {
    expect(() => createClient({ retry: { attempts: 0 } })).toThrow(/retry\.attempts/)
    expect(() => createClient({ maxJitterMs: -1 })).toThrow(/maxJitterMs/)
    expect(() => createClient({ learn: { maxPolicies: 0 } })).toThrow(/learn\.maxPolicies/)
  })
})

describe('the closed loop: learning from the fields', () => {
  it('r=0;t=3 makes the next call to that origin wait 3 s (plus jitter) instead of being refused', async () => {
    const { sent, events, run } = setup([
      {
        status: 200,
        headers: { 'RateLimit-Policy': '"burst";q=10;w=60', RateLimit: '"burst";r=0;t=3' },
      },
      { status: 200 },
    ])
    await run('https://api.test/a')
    await run('https://api.test/b')
    expect(sent.map((s) => s.at - START)).toEqual([0, 3500])
    expect(events).toEqual([
      {
        type: 'wait',
        reason: 'learned',
        policy: 'burst',
        delayMs: 3500,
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
  const limiter = localLimiter({ algorithm: 'token_bucket', rate: 2, period: '1s', burst: 1 }, time)
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

it('100 concurrent fetches through one client share its limiter: at most 10 sent in any second', async () => {
  const time = manualTime(START)
  const limiter = localLimiter({ algorithm: 'sliding_log', limit: 10, window: '1s' }, time)
  const sentAt: number[] = []
  const client = createClient({
    ...time,
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
