import {
  type Clock,
  defineRules,
  rateLimit,
  type Store,
  settleFrom,
  usageReader,
} from '@tollgate/hono'
import { Hono } from 'hono'
import { type ChatRequest, promptTokens } from './upstream.js'

/**
 * How the proxy reaches the upstream API: `fetch` with the upstream's origin in front of the
 * path, or an app's `request` in tests.
 */
export type Upstream = (path: string, init: RequestInit) => Response | Promise<Response>

export type ProxyOptions = {
  readonly upstream: Upstream
  /** For tests: time without sleeping. */
  readonly clock?: Clock | undefined
  /** Where the counts live; `redisStore(...)` to share them between processes. @default memory */
  readonly store?: Store | undefined
}

/**
 * 10,000 tokens a minute per API key (the `Authorization: Bearer` key), reserved against the
 * request's estimate and settled with what the upstream reports it used; and 60 requests a
 * minute per key, charged as they arrive.
 */
export const RULES = defineRules([
  {
    id: 'tokens',
    match: { identity: 'api_key' },
    algorithm: 'token_bucket',
    rate: 10_000,
    period: '1m',
    burst: 10_000,
    settle: true,
  },
  {
    id: 'requests',
    match: { identity: 'api_key' },
    algorithm: 'fixed_window',
    limit: 60,
    window: '1m',
  },
])

/** When a request does not say how long its answer may be: the upstream's own bound, say. */
export const DEFAULT_MAX_TOKENS = 1024

/**
 * What a chat completion may cost at most: its prompt (counted as the upstream counts it) and
 * the longest answer it allows, so that the estimate is never short (see the overshoot bound in
 * docs/concepts/charging-after-the-response.md).
 */
export function estimateTokens(chat: ChatRequest | undefined): number {
  if (chat === undefined) return 0
  return promptTokens(chat) + (chat.max_tokens ?? DEFAULT_MAX_TOKENS)
}

type Env = { Variables: { chat: ChatRequest | undefined } }

/**
 * An OpenAI-compatible proxy that limits tokens per minute per API key: each request reserves
 * its estimate, its `RateLimit` fields say what is left after that reservation, and once the
 * answer has been sent (a JSON body, or a stream whose last event reports the usage) the tokens
 * it really used replace the estimate. A client that leaves mid-stream, or an upstream error,
 * gives the reservation back.
 */
export function createProxy(options: ProxyOptions): Hono<Env> {
  const app = new Hono<Env>()
  // The body is parsed before the limiter, which estimates from it.
  app.use('/v1/*', async (c, next) => {
    const chat = await c.req.json<ChatRequest>().catch(() => undefined)
    c.set('chat', chat)
    await next()
  })
  app.use(
    '/v1/*',
    rateLimit(RULES, {
      bearerAsApiKey: true,
      estimate: (c) => estimateTokens(c.get('chat')),
      settle: settleFrom(usageReader()),
      clock: options.clock,
      store: options.store,
    }),
  )
  app.post('/v1/chat/completions', async (c) => {
    const chat = c.get('chat')
    if (chat === undefined) return c.json({ error: { message: 'expected a JSON body' } }, 400)
    // A stream reports its usage only when asked to.
    const forwarded = chat.stream ? { ...chat, stream_options: { include_usage: true } } : chat
    const answer = await options.upstream('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(forwarded),
      signal: c.req.raw.signal,
    })
    // The body streams through as the upstream sends it.
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'Content-Type': answer.headers.get('Content-Type') ?? 'application/json' },
    })
  })
  return app
}
