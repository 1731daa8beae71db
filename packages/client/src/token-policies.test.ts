import { isRateLimitError } from '@tollgate/core'
import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ClientEvent, type ClientOptions, createClient, type TokenEstimate } from './index.js'
import { START, setup } from './test-client.js'

const openAi = (requests: [number, string], tokens: [number, string]) => ({
  'x-ratelimit-limit-requests': '100',
  'x-ratelimit-remaining-requests': String(requests[0]),
  'x-ratelimit-reset-requests': requests[1],
  'x-ratelimit-limit-tokens': '10000',
  'x-ratelimit-remaining-tokens': String(tokens[0]),
  'x-ratelimit-reset-tokens': tokens[1],
})

/** A call estimated at `tokens` tokens, the estimate carried in a header the test reads back. */
const call = (tokens: number) => ({ headers: { 'x-tokens': String(tokens) } })
const fromHeader = (request: Request) => Number(request.headers.get('x-tokens') ?? 1)

describe('token policies', () => {
  it('a call waits for the reset of the tokens it needs, and one that fits does not', async () => {
    const { sent, events, run } = setup(
      [
        { status: 200, headers: openAi([99, '1s'], [1000, '6s']) },
        { status: 200, headers: openAi([98, '1s'], [400, '6s']) },
        { status: 200 },
      ],
      { tokens: fromHeader, maxJitterMs: 0 },
    )
    await run('https://api.test/v1/chat/completions', call(100))
    await run('https://api.test/v1/chat/completions', call(600)) // 1000 left: sent at once
    await run('https://api.test/v1/chat/completions', call(600)) // 400 left: waits for the reset
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 6000])
    expect(events).toEqual([
      {
        type: 'wait',
        reason: 'learned',
        policy: 'tokens',
        delayMs: 6000,
        url: 'https://api.test/v1/chat/completions',
      },
    ])
  })

  it('keeps requests and tokens apart: each policy is charged in its own unit', async () => {
    const { sent, events, run } = setup(
      [
        // Requests spent, tokens plenty: the next call waits for the requests' reset only.
        { status: 200, headers: openAi([0, '2s'], [9000, '30s']) },
        // Tokens spent, requests plenty: a call of 0 tokens is not held back, one of 1 is.
        { status: 200, headers: openAi([50, '1s'], [0, '30s']) },
        { status: 200, headers: openAi([49, '1s'], [0, '28s']) },
        { status: 200 },
      ],
      { tokens: fromHeader, maxJitterMs: 0 },
    )
    await run('https://api.test/', call(10))
    await run('https://api.test/', call(10))
    await run('https://api.test/', call(0))
    await run('https://api.test/', call(1))
    expect(sent.map((s) => s.at - START)).toEqual([0, 2000, 2000, 30_000])
    expect(events.map((e) => e.type === 'wait' && [e.policy, e.delayMs])).toEqual([
      ['requests', 2000],
      ['tokens', 28_000],
    ])
  })

  it("charges Anthropic's input and output limits each their part of { input, output }", async () => {
    const anthropic = {
      'anthropic-ratelimit-input-tokens-remaining': '5000',
      'anthropic-ratelimit-input-tokens-reset': new Date(START + 60_000).toISOString(),
      'anthropic-ratelimit-output-tokens-remaining': '100',
      'anthropic-ratelimit-output-tokens-reset': new Date(START + 30_000).toISOString(),
    }
    const estimates: TokenEstimate[] = [
      { input: 10, output: 10 },
      { input: 4000, output: 50 }, // fits both
      { input: 10, output: 200 }, // the output limit holds it back
      1000, // a total is charged against each: held back by the output limit too
    ]
    const { sent, events, run } = setup(
      [
        { status: 200, headers: anthropic },
        { status: 200, headers: anthropic },
        { status: 200, headers: anthropic },
        { status: 200 },
      ],
      {
        tokens: (request) => estimates[Number(new URL(request.url).pathname.slice(1))]!,
        maxJitterMs: 0,
      },
    )
    for (let i = 0; i < estimates.length; i++) await run(`https://api.test/${i}`)
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 30_000, 30_000])
    expect(events.map((e) => e.type === 'wait' && [e.policy, e.delayMs])).toEqual([
      ['output-tokens', 30_000],
    ])
  })

  it('takes the tokens of calls still in flight off what an answer says is left', async () => {
    // The server counts a call when it admits it; an answer that left before a later call was
    // admitted does not count it.
    const time = manualTime(START)
    const sentAt: number[] = []
    const latency = [100, 1000, 0]
    const answers = [openAi([99, '1s'], [1400, '1s']), openAi([98, '50ms'], [800, '50ms']), {}]
    const client = createClient({
      clock: time.clock,
      timers: time.timers,
      maxJitterMs: 0,
      tokens: fromHeader,
      fetch: async () => {
        const index = sentAt.push(time.now() - START) - 1
        await new Promise<void>((resolve) =>
          time.timers.setTimeout(() => resolve(), latency[index]!),
        )
        return new Response('', { headers: answers[index] })
      },
    })
    const a = client.fetch('https://api.test/', call(600))
    const b = client.fetch('https://api.test/', call(600))
    await time.advance(100) // a answers "1400 left"; b's 600 are in flight: 800 are
    const c = client.fetch('https://api.test/', call(900))
    await time.runAll()
    await Promise.all([a, b, c])
    // c waits for a's reset (1.1 s); without b's tokens taken off it would be sent at 100 ms,
    // and refused: 800 < 900.
    expect(sentAt).toEqual([0, 0, 1100])
  })

  it('reads an estimate from the body, which is still sent whole', async () => {
    const { sent, run } = setup(
      [{ status: 200, headers: openAi([99, '1s'], [30, '9s']) }, { status: 200 }],
      { tokens: async (request) => (await request.clone().text()).length, maxJitterMs: 0 },
    )
    await run('https://api.test/', { method: 'POST', body: 'x'.repeat(10) })
    await run('https://api.test/', { method: 'POST', body: 'y'.repeat(40) }) // 40 > 30: waits
    expect(sent).toEqual([
      { at: START, method: 'POST', body: 'x'.repeat(10) },
      { at: START + 9000, method: 'POST', body: 'y'.repeat(40) },
    ])
  })

  it('refuses an estimate that is no number of tokens, and sends nothing', async () => {
    for (const estimate of [Number.NaN, -1, Number.POSITIVE_INFINITY, { input: 1, output: -2 }]) {
      const { sent, client } = setup([{ status: 200 }], {
        tokens: () => estimate as TokenEstimate,
      })
      const error = await client.fetch('https://api.test/').catch((e: unknown) => e)
      expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_COST')
      expect(sent).toEqual([])
    }
  })

  it('without an estimate a call counts one token: held back only by a spent token policy', async () => {
    const { sent, run } = setup(
      [
        { status: 200, headers: openAi([99, '1s'], [1, '5s']) },
        { status: 200, headers: openAi([98, '1s'], [0, '5s']) },
        { status: 200 },
      ],
      { maxJitterMs: 0 },
    )
    for (let i = 0; i < 3; i++) await run('https://api.test/')
    expect(sent.map((s) => s.at - START)).toEqual([0, 0, 5000])
  })
})

/**
 * An LLM API's token limit as the vendors describe it: a bucket of `limit` tokens refilled
 * continuously at `limit` per minute. It charges a call's tokens when it admits it, and answers
 * with what is left and the time until the bucket is full again, as OpenAI or Anthropic write it.
 */
function llmServer(limit: number, dialect: 'openai' | 'anthropic', now: () => number) {
  const windowMs = 60_000
  let level = limit
  let at = now()
  const go = (ms: number) => `${Math.floor(ms / 60_000)}m${(ms % 60_000) / 1000}s`
  return (tokens: number) => {
    level = Math.min(limit, level + ((now() - at) * limit) / windowMs)
    at = now()
    const refused = level < tokens
    if (!refused) level -= tokens
    const fullInMs = Math.ceil(((limit - level) * windowMs) / limit)
    const headers: Record<string, string> =
      dialect === 'openai'
        ? {
            'x-ratelimit-limit-tokens': String(limit),
            'x-ratelimit-remaining-tokens': String(Math.floor(level)),
            'x-ratelimit-reset-tokens': go(fullInMs),
          }
        : {
            'anthropic-ratelimit-tokens-limit': String(limit),
            'anthropic-ratelimit-tokens-remaining': String(Math.floor(level)),
            // Whole seconds, rounded up: the time is sent without its fraction.
            'anthropic-ratelimit-tokens-reset': new Date(
              Math.ceil((now() + fullInMs) / 1000) * 1000,
            ).toISOString(),
          }
    if (refused) headers['retry-after'] = String(Math.ceil((tokens - level) / (limit / 60)))
    return { status: refused ? 429 : 200, headers }
  }
}

it('paces calls of any size to a continuously refilled token limit: never refused, at its rate', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('openai' as const, 'anthropic' as const),
      fc.integer({ min: 1000, max: 100_000 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 60 }),
      async (dialect, limit, sizes) => {
        const time = manualTime(START)
        const server = llmServer(limit, dialect, time.now)
        const costs = sizes.map((size) => Math.max(1, Math.floor(size * limit)))
        const statuses: number[] = []
        const events: ClientEvent[] = []
        const options: ClientOptions = {
          clock: time.clock,
          timers: time.timers,
          maxJitterMs: 0,
          retry: false,
          tokens: fromHeader,
          onEvent: (event) => events.push(event),
          fetch: async (request) => {
            const answer = server(fromHeader(request))
            statuses.push(answer.status)
            return new Response('', answer)
          },
        }
        const client = createClient(options)
        for (const cost of costs) {
          const pending = client.fetch('https://llm.test/', call(cost))
          await time.runAll()
          await pending
        }
        expect(statuses.every((status) => status === 200)).toBe(true)
        // Waiting for a full bucket loses no tokens: what was spent since it was last full comes
        // back at the limit's rate, so the calls take at most their tokens at that rate, plus
        // up to a second for each wait on a reset rounded up to whole seconds (Anthropic's).
        const waits = events.filter((e) => e.type === 'wait').length
        const total = costs.reduce((sum, cost) => sum + cost, 0)
        const ideal = (total * 60_000) / limit
        expect(time.now() - START).toBeLessThanOrEqual(ideal + waits * 1000)
      },
    ),
    { numRuns: 200 },
  )
})
