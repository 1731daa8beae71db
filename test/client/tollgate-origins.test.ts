/**
 * The client against Tollgate on Express, Koa and Hono: real HTTP, one virtual clock for both
 * sides. A client that throttles itself to the server's rule, or that learns it from the fields,
 * is never refused; one that does neither is refused once and comes back after exactly the wait
 * the server advertised.
 */
import { type ClientEvent, createClient, localLimiter } from '@tollgate/client'
import type { RuleConfig } from '@tollgate/express'
import { afterEach, describe, expect, it } from 'vitest'
import { ORIGINS, type Origin } from './servers.js'
import { virtualTime } from './virtual-time.js'

const T0 = 1_700_000_000_000

/** 10 per second, bursts of 10: one token every 100 ms. */
const RULE: RuleConfig = {
  id: 'per-ip',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 10,
  period: '1s',
  burst: 10,
}

let origin: Origin | undefined
afterEach(async () => {
  await origin?.close()
  origin = undefined
})

describe.each(ORIGINS)('against Tollgate on $name', (factory) => {
  async function start() {
    const time = virtualTime(T0)
    origin = await factory.start([RULE], time.clock)
    const statuses: number[] = []
    const events: ClientEvent[] = []
    const send = async (request: Request) => {
      const response = await fetch(request)
      statuses.push(response.status)
      return response
    }
    return { time, statuses, events, send, url: origin.url }
  }

  it("a client throttled to the server's own rule gets no 429 over 1,000 requests", async () => {
    const { time, statuses, send, url } = await start()
    const client = createClient({
      ...time,
      fetch: send,
      learn: false,
      limiter: localLimiter(RULE, time),
    })
    for (let i = 0; i < 1000; i++) await client.fetch(`${url}/v1/items`)
    expect(statuses).toHaveLength(1000)
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    // The burst of 10 at once, then one every 100 ms: as fast as the rule allows, no slower.
    expect(time.clock.now() - T0).toBe(99_000)
  }, 120_000)

  it('a client that only learns from the fields gets no 429 over 1,000 requests either', async () => {
    const { time, statuses, events, send, url } = await start()
    const client = createClient({
      ...time,
      fetch: send,
      random: () => 0.5,
      onEvent: (e) => events.push(e),
    })
    for (let i = 0; i < 1000; i++) await client.fetch(`${url}/v1/items`)
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    expect(events.length).toBeGreaterThan(0)
    expect(
      events.every((e) => e.type === 'wait' && e.reason === 'learned' && e.policy === 'per-ip'),
    ).toBe(true)
  }, 120_000)

  it('a client without either is refused, then recovers after exactly the advertised wait', async () => {
    const { time, statuses, events, send, url } = await start()
    const jitter = 0.25
    const client = createClient({
      ...time,
      fetch: send,
      learn: false,
      random: () => jitter,
      onEvent: (e) => events.push(e),
    })
    for (let i = 0; i < 10; i++) await client.fetch(`${url}/v1/items`)
    const refusedAt = time.clock.now()
    const response = await client.fetch(`${url}/v1/items`)
    expect(response.status).toBe(200)
    expect(statuses).toEqual([...Array(10).fill(200), 429, 200])
    // Retry-After: 1 (100 ms to the next token, in whole seconds), plus jitter ≤ min(1 s, wait).
    const expectedJitter = Math.floor(jitter * (Math.min(1000, 1000) + 1))
    expect(time.clock.now() - refusedAt).toBe(1000 + expectedJitter)
    expect(events).toEqual([
      expect.objectContaining({
        type: 'retry',
        reason: 'retry-after',
        policy: 'per-ip',
        status: 429,
        delayMs: 1000 + expectedJitter,
      }),
    ])
  })
})
