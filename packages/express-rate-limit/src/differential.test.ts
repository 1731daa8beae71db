// The facade and express-rate-limit itself, side by side: the same options and the same requests
// to both, and the same statuses, rate-limit headers, bodies and warnings from both. The time is
// frozen (only `Date` is faked) and moved by hand, so windows end without waiting.
import express, { type RequestHandler } from 'express'
import original, { ipKeyGenerator as originalIpKey } from 'express-rate-limit'
import request from 'supertest'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import facade, { ipKeyGenerator } from './index.js'

type Factory = (options: Record<string, unknown>) => RequestHandler
type Step = { path?: string; advance?: number; headers?: Record<string, string> }

const FIELDS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'date',
  'content-type',
]

/** An app with the limiter(s), a route that succeeds, one that fails, and one that shows req info. */
function appWith(make: Factory, options: readonly Record<string, unknown>[], seen: unknown[]) {
  const app = express()
  for (const each of options) app.use(make(each))
  app.get('/', (_req, res) => {
    res.send('Hi there!')
  })
  app.get('/error', (_req, res) => {
    res.sendStatus(400)
  })
  app.get('/info', (req, res) => {
    const info = (req as unknown as Record<string, unknown>)['rateLimit'] as Record<string, unknown>
    seen.push({ ...info, current: info?.['current'] })
    res.send('ok')
  })
  // An error's message only: the stacks differ.
  app.use((error: Error, _req: express.Request, res: express.Response, _next: unknown) => {
    res.status(500).send(error.message)
  })
  return app
}

/** Runs the steps against one implementation: each response's status, fields and body. */
async function run(make: Factory, options: readonly Record<string, unknown>[], steps: Step[]) {
  const seen: unknown[] = []
  const warnings: string[] = []
  const logger = {
    warn: (error: { code?: string }) => warnings.push(`warn ${error?.code}`),
    error: (error: { code?: string; message?: string }, message?: string) =>
      warnings.push(`error ${error?.code ?? message ?? error?.message}`),
  }
  const app = appWith(
    make,
    options.map((o) => ({ logger, ...o })),
    seen,
  )
  const start = Date.now()
  const responses = []
  for (const step of steps) {
    if (step.advance !== undefined) vi.setSystemTime(Date.now() + step.advance)
    const res = await request(app)
      .get(step.path ?? '/')
      .set(step.headers ?? {})
    const fields = Object.fromEntries(FIELDS.map((name) => [name, res.headers[name]]))
    // Node dates a response itself, by the real clock, when the limiter did not (no reset time).
    if (fields['date'] !== new Date().toUTCString()) fields['date'] = 'by the server'
    responses.push({ status: res.status, fields, body: res.text })
  }
  vi.setSystemTime(start)
  // The original names its own store error differently: only the logging matters.
  return {
    responses,
    seen,
    warnings: warnings.map((w) => w.replace(/error .*allowing.*/, 'store')),
  }
}

async function expectSame(
  options: Record<string, unknown> | Record<string, unknown>[],
  steps: Step[],
) {
  const list = Array.isArray(options) ? options : [options]
  const ours = await run(facade as unknown as Factory, list, steps)
  const theirs = await run(original as unknown as Factory, list, steps)
  expect(ours).toEqual(theirs)
  return ours
}

const times = (n: number, step: Step = {}) => Array.from({ length: n }, () => step)

describe('the facade and express-rate-limit answer alike', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 1, 12, 0, 0, 250) })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('with the defaults, past the limit and after the window', async () => {
    const { responses } = await expectSame({}, [...times(6), { advance: 60_000 }, ...times(2)])
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 200, 200, 200])
  })

  it.each([true, 'draft-6', 'draft-7', 'draft-8'])('with standardHeaders %s', async (draft) => {
    await expectSame({ limit: 2, windowMs: 90_500, standardHeaders: draft }, [
      ...times(3),
      { advance: 30_000 },
      ...times(1),
      { advance: 61_000 },
      ...times(1),
    ])
  })

  it('with two draft-8 limiters, a policy name, and legacy headers off', async () => {
    await expectSame(
      [
        { limit: 3, windowMs: 5000, standardHeaders: 'draft-8', legacyHeaders: false },
        { limit: 10, windowMs: 2 * 3_600_000, standardHeaders: 'draft-8', identifier: 'hourly' },
      ],
      times(5),
    )
  })

  it('with a message, a status code, a handler and retryAfter', async () => {
    await expectSame({ limit: 1, message: { error: 'slow down' }, statusCode: 420 }, times(2))
    await expectSame({ limit: 1, message: async () => 'later' }, times(2))
    await expectSame({ limit: 1, retryAfter: 7 }, times(2))
    await expectSame(
      {
        limit: 1,
        handler: (_req: unknown, res: express.Response) => res.status(503).json({ no: true }),
      },
      times(2),
    )
    await expectSame({ limit: 1, legacyHeaders: false, standardHeaders: false }, times(2))
  })

  it('with limit as a function, max, a key generator and skip', async () => {
    await expectSame({ limit: async () => 2 }, times(3))
    await expectSame({ max: 1 }, times(2))
    await expectSame({ limit: 1, keyGenerator: (req: express.Request) => String(req.query['k']) }, [
      { path: '/?k=a' },
      { path: '/?k=b' },
      { path: '/?k=a' },
    ])
    await expectSame({ limit: 1, skip: (req: express.Request) => req.query['s'] === '1' }, [
      { path: '/?s=1' },
      { path: '/?s=1' },
      {},
      {},
    ])
  })

  it('with skipSuccessfulRequests and skipFailedRequests', async () => {
    const mixed: Step[] = [{}, { path: '/error' }, {}, { path: '/error' }, {}, {}]
    await expectSame({ limit: 2, skipSuccessfulRequests: true }, mixed)
    await expectSame({ limit: 2, skipFailedRequests: true }, mixed)
    await expectSame(
      {
        limit: 2,
        skipSuccessfulRequests: true,
        requestWasSuccessful: (req: express.Request) => req.path !== '/error',
      },
      mixed,
    )
  })

  it('with req.rateLimit under its property name', async () => {
    const { seen } = await expectSame({ limit: 2 }, times(3, { path: '/info' }))
    expect(seen[0]).toMatchObject({ limit: 2, used: 1, remaining: 1, current: 1 })
  })

  it('with a store that fails, passing its error on or admitting', async () => {
    const failing = () => ({
      increment: async () => {
        throw new Error('down')
      },
      decrement: async () => {},
      resetKey: async () => {},
    })
    const down = await expectSame({ store: failing() }, times(1))
    expect(down.responses[0]!.status).toBe(500)
    const open = await expectSame({ store: failing(), passOnStoreError: true }, times(1))
    expect(open.responses[0]!.status).toBe(200)
    expect(open.warnings).toEqual(['store'])
  })

  it('with the same coded warnings', async () => {
    const { warnings } = await expectSame(
      { limit: 0, ipv6Subnet: 20, keyGenerator: (req: express.Request) => req.ip ?? '', nope: 1 },
      [{ headers: { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.9' } }],
    )
    expect(warnings).toEqual([
      'error ERR_ERL_UNKNOWN_OPTION',
      'error ERR_ERL_IPV6_SUBNET',
      'error ERR_ERL_KEY_GEN_IPV6',
      'error ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR',
      'warn WRN_ERL_MAX_ZERO',
    ])
    const proxied = await expectSame({}, [
      { headers: { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.9' } },
    ])
    expect(proxied.warnings).toEqual([
      'error ERR_ERL_UNEXPECTED_X_FORWARDED_FOR',
      'error ERR_ERL_FORWARDED_HEADER',
    ])
  })

  it('keys addresses alike', () => {
    const addresses = [
      '203.0.113.7',
      '::ffff:203.0.113.7',
      '::ffff:cb00:7107',
      '::203.0.113.7',
      '::1',
      '2001:db8:1234:5678:9abc:def0:1234:5678',
      '2001:DB8::1',
      '64:ff9b::203.0.113.7',
    ]
    for (const ip of addresses) {
      for (const subnet of [56, 48, 64, 128, false] as const) {
        expect([ip, subnet, ipKeyGenerator(ip, subnet)]).toEqual([
          ip,
          subnet,
          originalIpKey(ip, subnet),
        ])
      }
    }
  })
})
