/**
 * Two limiters on one request (a global limit for the app, then a tighter one on login): every
 * adapter sends one value per single-valued field, that of the more restrictive rule, and one
 * list member per rule in the list fields. Express and Koa write before the app runs, Hono
 * after it, so this also checks that the order of writing does not change the answer.
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

const T0 = Date.UTC(2026, 0, 1)
const GLOBAL: RuleConfig[] = [
  { id: 'global', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 10, window: '1m' },
]
const LOGIN: RuleConfig[] = [
  {
    id: 'login',
    match: { identity: 'ip', route: 'GET /login' },
    algorithm: 'fixed_window',
    limit: 1,
    window: '5m',
  },
]
const FIELDS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'retry-after',
]

type Answer = { status: number; fields: Record<string, string | undefined> }
type Send = (path: string) => Promise<Answer>

function picked(status: number, header: (name: string) => string | undefined): Answer {
  return { status, fields: Object.fromEntries(FIELDS.map((name) => [name, header(name)])) }
}

const APPS: ReadonlyArray<readonly [string, () => Send]> = [
  [
    'express',
    () => {
      const options = { clock: manualClock(T0), legacyHeaders: true }
      const app = express()
      app.use(expressRateLimit(GLOBAL, options))
      app.use(expressRateLimit(LOGIN, options))
      app.use((_req, res) => {
        res.send('ok')
      })
      return async (path) => {
        const res = await request(app).get(path)
        return picked(res.status, (name) => res.headers[name])
      }
    },
  ],
  [
    'koa',
    () => {
      const options = { clock: manualClock(T0), legacyHeaders: true }
      const app = new Koa()
      app.use(koaRateLimit(GLOBAL, options))
      app.use(koaRateLimit(LOGIN, options))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      const handler = app.callback()
      return async (path) => {
        const res = await request(handler).get(path)
        return picked(res.status, (name) => res.headers[name])
      }
    },
  ],
  [
    'hono',
    () => {
      const options = {
        clock: manualClock(T0),
        legacyHeaders: true,
        getConnInfo: () => ({ remote: { address: '127.0.0.1' } }),
      }
      const app = new Hono()
      app.use(honoRateLimit(GLOBAL, options))
      app.use(honoRateLimit(LOGIN, options))
      app.all('*', (c) => c.text('ok'))
      return async (path) => {
        const res = await app.request(path)
        return picked(res.status, (name) => res.headers.get(name) ?? undefined)
      }
    },
  ],
]

async function conversation(send: Send): Promise<Answer[]> {
  return [await send('/login'), await send('/login'), await send('/home')]
}

describe('two limiters on one request', () => {
  it('send the fields of the more restrictive rule, the same on every adapter', async () => {
    const answers = await Promise.all(APPS.map(([, start]) => conversation(start())))
    const loginReset = String(T0 / 1000 + 300)
    const [first, denied, home] = answers[0]!
    expect(first).toEqual({
      status: 200,
      fields: {
        'x-ratelimit-limit': '1',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': loginReset,
        'ratelimit-policy': '"global";q=10;w=60, "login";q=1;w=300',
        ratelimit: '"global";r=9;t=60, "login";r=0;t=300',
        'retry-after': undefined,
      },
    })
    // The second login is denied by the login limit; the global one was charged first.
    expect(denied).toMatchObject({
      status: 429,
      fields: {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': loginReset,
        'retry-after': '300',
      },
    })
    expect(home).toMatchObject({ status: 200, fields: { 'x-ratelimit-remaining': '7' } })
    for (const [index, [name]] of APPS.entries()) {
      expect({ name, answers: answers[index] }).toEqual({ name, answers: answers[0] })
    }
  })

  it('send one value for a single-valued field an earlier middleware set, never appending', async () => {
    const upstream = {
      'X-RateLimit-Limit': '5000',
      'X-RateLimit-Remaining': '4999',
      'X-RateLimit-Reset': '1',
    }
    const options = () => ({ clock: manualClock(T0), legacyHeaders: true })
    const express5 = express()
    express5.use((_req, res, next) => {
      for (const [name, value] of Object.entries(upstream)) res.setHeader(name, value)
      next()
    })
    express5.use(expressRateLimit(GLOBAL, options()))
    express5.use((_req, res) => {
      res.send('ok')
    })
    const koa = new Koa()
    koa.use((ctx, next) => {
      ctx.set(upstream)
      return next()
    })
    koa.use(koaRateLimit(GLOBAL, options()))
    koa.use((ctx) => {
      ctx.body = 'ok'
    })
    const hono = new Hono()
    hono.use(async (c, next) => {
      for (const [name, value] of Object.entries(upstream)) c.header(name, value)
      await next()
    })
    hono.use(
      honoRateLimit(GLOBAL, {
        ...options(),
        getConnInfo: () => ({ remote: { address: '127.0.0.1' } }),
      }),
    )
    hono.all('*', (c) => c.text('ok'))

    const fromNode = (res: request.Response) => picked(res.status, (name) => res.headers[name])
    const honoAnswer = await hono.request('/home')
    const answers = [
      fromNode(await request(express5).get('/home')),
      fromNode(await request(koa.callback()).get('/home')),
      picked(honoAnswer.status, (name) => honoAnswer.headers.get(name) ?? undefined),
    ]
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 200 })
      expect(answer.fields).toMatchObject({
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '9',
        'x-ratelimit-reset': String(T0 / 1000 + 60),
      })
    }
  })
})
