import { memoryStore } from '@tollgate/hono'
import { expect, it } from 'vitest'
import { createProxy, DEFAULT_MAX_TOKENS } from './proxy.js'
import { createUpstream } from './upstream.js'

/** The proxy in front of the fake upstream, in process, on a clock the test moves. */
function setUp() {
  let now = Date.UTC(2026, 0, 1)
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const upstream = createUpstream({ hold: () => held })
  const store = memoryStore()
  const proxy = createProxy({
    upstream: (path, init) => upstream.request(path, init),
    clock: { now: () => now },
    store,
  })
  const chat = (key: string, body: object) =>
    proxy.request('/v1/chat/completions', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', ...body }),
    })
  return {
    chat,
    release,
    advance: (ms: number) => {
      now += ms
    },
    /** Tokens the key has left, as the next request's fields show them (reserving nothing). */
    left: async (key: string) => {
      const answer = await chat(key, { max_tokens: 0, messages: [] })
      await answer.text()
      return tokensLeft(answer)
    },
  }
}

/** The tokens rule's remaining units, from the `RateLimit` field. */
function tokensLeft(answer: Response): number {
  const field = answer.headers.get('ratelimit') ?? ''
  return Number(/"tokens";r=(\d+)/.exec(field)?.[1])
}

// 40 characters: 10 prompt tokens, as the fake upstream counts them.
const messages = [{ role: 'user', content: 'Tell me how a rate limiter counts tokens' }]

it('reserves the prompt and max_tokens, and settles the usage of a JSON answer', async () => {
  const { chat, left } = setUp()
  const answer = await chat('sk-a', { messages, max_tokens: 500 })
  expect(answer.status).toBe(200)
  // The fields say what is left after the reservation: 10 + 500.
  expect(tokensLeft(answer)).toBe(10_000 - 510)
  const body = (await answer.json()) as { usage: { total_tokens: number } }
  // The answer used 10 + 12: the rest of the reservation came back.
  expect(body.usage.total_tokens).toBe(22)
  expect(await left('sk-a')).toBe(10_000 - 22)
})

it('settles the usage at the end of a streamed answer', async () => {
  const { chat, left, release } = setUp()
  release()
  const answer = await chat('sk-b', { messages, max_tokens: 5, stream: true })
  expect(answer.headers.get('content-type')).toBe('text/event-stream')
  expect(tokensLeft(answer)).toBe(10_000 - 15)
  const text = await answer.text()
  // The proxy asked for the usage; the upstream sent it last, before [DONE].
  expect(text).toContain('"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}')
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
  expect(await left('sk-b')).toBe(10_000 - 15)
})

it('counts each API key apart, and refuses an estimate that does not fit with Retry-After', async () => {
  const { chat, left, advance } = setUp()
  const first = await chat('sk-c', { messages, max_tokens: 9000 })
  await first.text()
  expect(await left('sk-c')).toBe(10_000 - 22)
  // Reserved: 9010, so 968 left; another 9010 waits for 8042 tokens: 48.3 s at 10,000 a minute.
  const holding = await chat('sk-c', { messages, max_tokens: 9000 })
  expect(holding.status).toBe(200)
  const refused = await chat('sk-c', { messages, max_tokens: 9000 })
  expect(refused.status).toBe(429)
  expect(refused.headers.get('retry-after')).toBe('49')
  expect(await left('sk-d')).toBe(10_000)
  // Once the held answer is read, its unused tokens come back, and the same request fits.
  await holding.text()
  advance(1)
  expect((await chat('sk-c', { messages, max_tokens: 9000 })).status).toBe(200)
})

it('gives the reservation back when the upstream fails', async () => {
  const { chat, left } = setUp()
  const failed = await chat('sk-e', { model: 'overloaded', messages, max_tokens: 4000 })
  expect(failed.status).toBe(503)
  expect(tokensLeft(failed)).toBe(10_000 - 4010)
  await failed.text()
  expect(await left('sk-e')).toBe(10_000)
})

it('gives the reservation back when the client leaves mid-stream', async () => {
  const { chat, left } = setUp()
  const answer = await chat('sk-f', { messages, stream: true })
  expect(tokensLeft(answer)).toBe(10_000 - 10 - DEFAULT_MAX_TOKENS)
  const reader = answer.body!.getReader()
  await reader.read()
  await reader.cancel()
  expect(await left('sk-f')).toBe(10_000)
})
