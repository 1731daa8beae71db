/**
 * The `user` hook overrides where each adapter looks for the authenticated user (req.user,
 * ctx.state.user, c.get('user')): it gets the framework's own request object, and its answer is
 * the key of a rule keyed on `user`.
 */
import { rateLimit as expressRateLimit, type RuleConfig } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { manualClock } from '@tollgate/test-utils'
import express from 'express'
import { Hono } from 'hono'
import Koa from 'koa'
import request from 'supertest'
import { describe, expect, it } from 'vitest'

const PER_USER: RuleConfig[] = [
  {
    id: 'per-user',
    match: { identity: 'user' },
    algorithm: 'fixed_window',
    limit: 1,
    window: '1m',
  },
]
const clock = () => manualClock(Date.UTC(2026, 0, 1))

type Send = (account: string) => Promise<number>

const APPS: ReadonlyArray<readonly [string, () => Send]> = [
  [
    'express',
    () => {
      const app = express()
      app.use(expressRateLimit(PER_USER, { clock: clock(), user: (req) => req.get('x-account') }))
      app.get('/', (_req, res) => {
        res.end('ok')
      })
      return async (account) => (await request(app).get('/').set('x-account', account)).status
    },
  ],
  [
    'koa',
    () => {
      const app = new Koa()
      app.use(koaRateLimit(PER_USER, { clock: clock(), user: (ctx) => ctx.get('x-account') }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      const handler = app.callback()
      return async (account) => (await request(handler).get('/').set('x-account', account)).status
    },
  ],
  [
    'hono',
    () => {
      const app = new Hono()
      app.use(
        honoRateLimit(PER_USER, {
          clock: clock(),
          getConnInfo: () => ({ remote: { address: '203.0.113.7' } }),
          user: (c) => c.req.header('x-account'),
        }),
      )
      app.get('/', (c) => c.text('ok'))
      return async (account) =>
        (await app.request('/', { headers: { 'x-account': account } })).status
    },
  ],
]

describe.each(APPS)('%s: the user hook', (_name, make) => {
  it('keys a user rule on what it returns, one bucket per account', async () => {
    const send = make()
    expect(await send('acct-1')).toBe(200)
    expect(await send('acct-1')).toBe(429)
    expect(await send('acct-2')).toBe(200)
  })
})
