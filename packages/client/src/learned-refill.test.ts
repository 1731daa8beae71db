import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { START, setup } from './test-client.js'

/** A client that has just spent what a policy had: the server said `r=0` with these fields. */
async function exhausted(policy: string, t: number, cost = 1) {
  const fields = { 'RateLimit-Policy': `"api";${policy}`, RateLimit: `"api";r=0;t=${t}` }
  const context = setup(() => ({ status: 200, headers: fields }), { cost: () => cost })
  await context.run('https://api.test/')
  await context.run('https://api.test/')
  return context
}

describe('units coming back before the reset', () => {
  it('a bucket (a burst beside the quota) is paced at q per w, not held until t', async () => {
    // 100 per second, bursts of 10: empty, a unit comes back every 10 ms; t says 1 s (100 ms).
    const { sent, events } = await exhausted('q=100;w=1;tollgate-burst=10', 1)
    expect(sent.map((s) => s.at - START)).toEqual([0, 10])
    // No jitter: units come back at the rate, there is no boundary to herd at.
    expect(events).toEqual([expect.objectContaining({ reason: 'learned', delayMs: 10 })])
  })

  it('paces every bucket at its rate, for any quota, window, burst and cost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 86_400 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        // Resets within the default budget (60 s): a longer learned wait is not made at all.
        fc.integer({ min: 1, max: 50 }),
        async (q, w, burst, cost, t) => {
          fc.pre(cost <= burst)
          const { sent } = await exhausted(`q=${q};w=${w};tollgate-burst=${burst}`, t, cost)
          // `cost` units come back in cost × w / q seconds; by t the bucket is full anyway, and
          // a wait for the reset has its jitter (random 0.5, of at most a fortieth of it).
          const paced = Math.ceil((cost * w * 1000) / q)
          const reset = t * 1000
          const jitter = Math.floor(0.5 * (Math.min(1000, Math.floor(reset / 40)) + 1))
          expect(sent[1]!.at - START).toBe(paced < reset ? paced : reset + jitter)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('a quota that takes longer than its window (a smoothed window) flows from t − w on', async () => {
    const { sent, time, run } = await exhausted('q=100;w=1', 2)
    // No unit before the window that ends at t; then one per 11 ms (10/11 of the rate).
    expect(sent.map((s) => s.at - START)).toEqual([0, 1011])
    // Still spending, the client hears t=2 again: the units flow on, no second wait of 1 s.
    await run('https://api.test/')
    expect(sent.at(-1)!.at - START).toBe(1022)
    expect(time.now() - START).toBe(1022)
  })

  it('a quota back within its window (a fixed window, a sliding log) is waited for until t', async () => {
    // Nothing says a unit comes back sooner: a fixed window gives nothing back before its end.
    const { sent } = await exhausted('q=100;w=1', 1)
    // random 0.5 of a jitter of at most a fortieth of the wait (25 ms): 13 ms.
    expect(sent.map((s) => s.at - START)).toEqual([0, 1013])
  })

  it('a policy without its quota and window is waited for until t, as before', async () => {
    const { sent } = await exhausted('pk=:YWE=:', 2)
    // random 0.5 of a jitter of at most a fortieth of the wait (50 ms): 25 ms.
    expect(sent.map((s) => s.at - START)).toEqual([0, 2025])
  })
})
