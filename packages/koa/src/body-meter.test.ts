import { type RuleConfig, settleFrom, usageReader } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import Koa from 'koa'
import request from 'supertest'
import { expect, it } from 'vitest'
import { rateLimit } from './index.js'

const TOKENS: RuleConfig[] = [
  {
    id: 'tokens',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 1000,
    window: '1m',
    cost: 100,
    settle: true,
  },
]

/** `ctx.body` set by `answer`, settled from its usage; the remaining units after each request. */
async function remainingAfter(answer: (ctx: Koa.Context) => void): Promise<string[]> {
  const app = new Koa()
  app.silent = true
  app.use(
    rateLimit(TOKENS, {
      clock: manualClock(Date.UTC(2026, 0, 1)),
      settle: settleFrom(usageReader()),
    }),
  )
  app.use((ctx) => answer(ctx))
  const server = app.listen(0, '127.0.0.1')
  try {
    const remaining: string[] = []
    for (let i = 0; i < 2; i++) {
      const fields = (await request(server).get('/')).headers['ratelimit'] ?? ''
      remaining.push(/;r=(\d+);/.exec(fields)?.[1] ?? 'none')
    }
    return remaining
  } finally {
    server.close()
  }
}

it('reads an object body as the JSON Koa sends', async () => {
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }
  expect(await remainingAfter((ctx) => (ctx.body = { usage }))).toEqual(['900', '893'])
})

it('reads a Buffer body whole', async () => {
  const text = JSON.stringify({ usage: { input_tokens: 5, output_tokens: 6 } })
  expect(await remainingAfter((ctx) => (ctx.body = Buffer.from(text)))).toEqual(['900', '889'])
})
