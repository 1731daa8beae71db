import {
  defineRules,
  memoryStore,
  type RuleConfig,
  RuleValidationError,
  type Store,
} from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { type HonoRateLimitOptions, rateLimit } from './index.js'

const perIp = (burst: number): RuleConfig[] => [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst },
]
const clock = () => manualClock(Date.UTC(2026, 0, 1))
const connInfo = () => ({ remote: { address: '203.0.113.7' } })

function app(options: HonoRateLimitOptions, burst = 2): Hono {
  const hono = new Hono()
  hono.use(rateLimit(perIp(burst), { clock: clock(), legacyHeaders: true, ...options }))
  return hono
}

describe('@tollgate/hono', () => {
  it('adds the headers to a Response the handler built itself, immutable ones included', async () => {
    const hono = app({ getConnInfo: connInfo })
    hono.get('/own', () => new Response('own', { headers: { 'x-own': '1' } }))
    // Response.redirect() has immutable headers.
    hono.get('/away', () => Response.redirect('https://shiplane.test/elsewhere', 302))
    const own = await hono.request('/own')
    expect(own.headers.get('x-own')).toBe('1')
    expect(own.headers.get('x-ratelimit-remaining')).toBe('1')
    const away = await hono.request('/away')
    expect(away.status).toBe(302)
    expect(away.headers.get('location')).toBe('https://shiplane.test/elsewhere')
    expect(away.headers.get('x-ratelimit-remaining')).toBe('0')
  })

  it('finds the client address on Node, Bun and Deno without being told', async () => {
    const hono = app({}, 1)
    hono.get('*', (c) => c.text('ok'))
    const envs = {
      node: { incoming: { socket: { remoteAddress: '::ffff:192.0.2.1' } } },
      bun: { requestIP: () => ({ address: '192.0.2.2' }) },
      deno: { remoteAddr: { hostname: '192.0.2.3' } },
    }
    for (const env of Object.values(envs)) {
      expect((await hono.request('/', {}, env)).status).toBe(200)
      expect((await hono.request('/', {}, env)).status).toBe(429)
    }
  })

  it('does not believe CF-Connecting-IP outside Cloudflare (no request.cf): one shared bucket', async () => {
    const warnings: string[] = []
    const hono = app({ logger: { warn: (message) => warnings.push(message) } })
    hono.get('*', (c) => c.text('ok'))
    const statuses = []
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      statuses.push((await hono.request('/', { headers: { 'cf-connecting-ip': ip } })).status)
    }
    expect(statuses).toEqual([200, 200, 429])
    expect(warnings.filter((w) => w.includes('WARN_CLIENT_ADDRESS_UNKNOWN'))).toHaveLength(1)
  })

  it('on Cloudflare, keys by CF-Connecting-IP and takes the X-Forwarded-For Cloudflare adds for no proxy to trust', async () => {
    const warnings: string[] = []
    const hono = app({ logger: { warn: (message) => warnings.push(message) } }, 1)
    hono.get('*', (c) => c.text('ok'))
    // Cloudflare appends the client it sees to any X-Forwarded-For the client sent.
    const onCloudflare = (ip: string, forwardedFor: string) => {
      const request = new Request('http://shiplane.test/', {
        headers: { 'cf-connecting-ip': ip, 'x-forwarded-for': forwardedFor },
      })
      Object.defineProperty(request, 'cf', { value: { colo: 'AMS' } })
      return hono.request(request)
    }
    expect((await onCloudflare('203.0.113.7', '203.0.113.7')).status).toBe(200)
    expect((await onCloudflare('203.0.113.7', '198.51.100.1, 203.0.113.7')).status).toBe(429)
    expect((await onCloudflare('2001:db8::1', '2001:db8::1')).status).toBe(200)
    expect(warnings).toEqual([])
  })

  it('hands an asynchronous refund to executionCtx.waitUntil, so it outlives the response', async () => {
    const inner = memoryStore()
    const store: Store = {
      consume: async (charges, now) => inner.consume(charges, now),
      refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
    }
    const hono = app({ getConnInfo: connInfo, store, refund: 'failed' }, 1)
    hono.get('/fail', (c) => c.text('failed', 500))
    const waited: Promise<unknown>[] = []
    const executionCtx = {
      waitUntil: (promise: Promise<unknown>) => waited.push(promise),
      passThroughOnException: () => {},
      props: {},
    }
    for (let i = 0; i < 3; i++) {
      const res = await hono.fetch(new Request('http://x/fail'), {}, executionCtx)
      expect(res.status).toBe(500)
      await Promise.all(waited)
    }
    expect(waited).toHaveLength(3)
  })

  it('keeps the headers on the error response and refunds it', async () => {
    const hono = app({ getConnInfo: connInfo, refund: 'failed' }, 1)
    hono.get('/boom', () => {
      throw new Error('boom')
    })
    for (let i = 0; i < 2; i++) {
      const res = await hono.request('/boom')
      expect(res.status).toBe(500)
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0')
    }
  })

  it('lets the app answer denials itself, with the headers already set', async () => {
    const hono = app(
      {
        getConnInfo: connInfo,
        onLimited: (c, denial) =>
          c.json({ error: 'slow down', retryAfter: denial.problem.retryAfter }, 429),
      },
      1,
    )
    hono.get('*', (c) => c.text('ok'))
    await hono.request('/')
    const res = await hono.request('/')
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'slow down', retryAfter: 1 })
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.headers.get('content-type')).toBe('application/json')
  })

  it('puts the fields on a Response the app builds by hand, and lets it label its own body', async () => {
    const hono = app(
      {
        getConnInfo: connInfo,
        onLimited: () => new Response('Slow down', { status: 429 }),
      },
      1,
    )
    hono.get('*', (c) => c.text('ok'))
    await hono.request('/')
    const res = await hono.request('/')
    expect(res.status).toBe(429)
    expect(await res.text()).toBe('Slow down')
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(res.headers.get('ratelimit')).toMatch(/^"per-ip";r=0;t=\d+$/)
    expect(res.headers.get('content-type')).toBe('text/plain;charset=UTF-8')
  })

  it('adds the fields to an immutable Response on a copy', async () => {
    const hono = app(
      {
        getConnInfo: connInfo,
        onLimited: () => Response.redirect('https://example.com/wait', 303),
      },
      1,
    )
    hono.get('*', (c) => c.text('ok'))
    await hono.request('/')
    const res = await hono.request('/')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('https://example.com/wait')
    expect(res.headers.get('retry-after')).toBe('1')
  })

  it('takes rules validated by defineRules', async () => {
    const rules = defineRules([
      { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'sliding_log', limit: 1, window: '1m' },
    ])
    const hono = new Hono()
    hono.use(rateLimit(rules, { clock: clock(), legacyHeaders: true }))
    hono.get('/', (c) => c.text('ok'))
    const env = { incoming: { socket: { remoteAddress: '192.0.2.1' } } }
    expect((await hono.request('/', {}, env)).status).toBe(200)
    expect((await hono.request('/', {}, env)).status).toBe(429)
  })

  it('refuses an invalid rule at start-up with ERR_RL_INVALID_RULE, naming the rule and the field', () => {
    const base = {
      id: 'r',
      match: { identity: 'ip' },
      algorithm: 'token_bucket',
      rate: 1,
      burst: 1,
    }
    const cases: Array<[unknown[], Array<[string | undefined, string]>]> = [
      [[{ ...base, burst: 0 }], [['r', 'burst']]],
      [[{ ...base, rate: 'ten' }], [['r', 'rate']]],
      [[{ ...base, period: 60 }], [['r', 'period']]],
      [[{ ...base, period: '0s' }], [['r', 'period']]],
      [[{ ...base, cost: 2 }], [['r', 'cost']]],
      [[{ ...base, cost: -1 }], [['r', 'cost']]],
      [[{ ...base, mode: 'dry-run' }], [['r', 'mode']]],
      [[{ ...base, onStoreError: 'maybe' }], [['r', 'onStoreError']]],
      [[{ ...base, onMissingIdentity: 'allow' }], [['r', 'onMissingIdentity']]],
      [[{ ...base, match: { identity: 'apikey' } }], [['r', 'match.identity']]],
      [[{ ...base, match: { identity: ['ip', 'ip'] } }], [['r', 'match.identity']]],
      [[{ ...base, match: { identity: 'ip', method: 'FETCH' } }], [['r', 'match.method']]],
      [[{ ...base, match: { identity: 'ip', plan: '' } }], [['r', 'match.plan']]],
      [[{ ...base, match: { identity: 'ip', methods: 'GET' } }], [['r', 'match.methods']]],
      [[{ ...base, match: undefined }], [['r', 'match']]],
      [[{ ...base, id: 'has space' }], [['has space', 'id']]],
      [[{ ...base, algorithm: 'token_buckets' }], [['r', 'algorithm']]],
      [[{ ...base, limit: 3 }], [['r', 'limit']]],
      [[{ ...base, burst: undefined }], [['r', 'burst']]],
      [[{ ...base, brust: 3 }], [['r', 'brust']]],
      [[{ ...base, description: 4 }], [['r', 'description']]],
      [
        [{ ...base, algorithm: 'fixed_window', window: '1m' }],
        [
          ['r', 'burst'],
          ['r', 'limit'],
          ['r', 'rate'],
        ],
      ],
      [[], [[undefined, 'rules']]],
      [[base, base], [['r', 'id']]],
    ]
    for (const [rules, where] of cases) {
      let thrown: unknown
      try {
        rateLimit(rules as RuleConfig[], { logger: false })
      } catch (error) {
        thrown = error
      }
      const name = JSON.stringify(rules)
      expect(thrown, name).toBeInstanceOf(RuleValidationError)
      const error = thrown as RuleValidationError
      expect(error.code, name).toBe('ERR_RL_INVALID_RULE')
      expect(error.issues.map((issue) => [issue.rule, issue.field]).sort(), name).toEqual(where)
    }
  })
})
