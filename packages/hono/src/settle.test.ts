import { memoryStore, type RuleConfig, type Store, settleFrom, usageReader } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import { Hono } from 'hono'
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

/** The memory store behind promises, as a remote store answers. */
function asyncStore(): Store {
  const inner = memoryStore()
  return {
    consume: async (charges, now) => inner.consume(charges, now),
    refund: async (charges, at, now) => inner.refund(charges, at, now),
    settle: async (settlements, at, now) => inner.settle(settlements, at, now),
  }
}

it('hands the pending settle of an asynchronous store to waitUntil (Workers)', async () => {
  const app = new Hono()
  app.use(
    rateLimit(TOKENS, {
      clock: manualClock(Date.UTC(2026, 0, 1)),
      store: asyncStore(),
      getConnInfo: () => ({ remote: { address: '203.0.113.7' } }),
      settle: settleFrom(usageReader()),
      legacyHeaders: true,
    }),
  )
  app.get('/', (c) =>
    c.json({ usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } }),
  )
  const pending: Promise<unknown>[] = []
  const executionCtx = {
    waitUntil: (p: Promise<unknown>) => void pending.push(p),
    passThroughOnException() {},
    props: {},
  }
  const first = await app.request('/', {}, undefined, executionCtx)
  expect(first.headers.get('x-ratelimit-remaining')).toBe('900')
  await first.text()
  expect(pending).toHaveLength(1)
  await Promise.all(pending)
  const second = await app.request('/', {}, undefined, executionCtx)
  expect(second.headers.get('x-ratelimit-remaining')).toBe('870')
})
