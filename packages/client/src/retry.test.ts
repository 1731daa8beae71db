import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createClient } from './index.js'
import { START, setup } from './test-client.js'

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
    // Each is an option's error, as the server packages' are.
    for (const options of [{ retry: { attempts: 0 } }, { maxJitterMs: -1 }, { maxJitterMs: 1.5 }]) {
      expect(() => createClient(options)).toThrow(
        expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION' }),
      )
    }
  })
})
