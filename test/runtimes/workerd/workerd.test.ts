/**
 * The Hono adapter and the core, with the default memory store, inside workerd (the Cloudflare
 * Workers runtime, run by miniflare). The worker is bundled for a platform without Node
 * built-ins and started without the `nodejs_compat` flag, so any Node dependency in the core or
 * the adapter fails the build or the start-up.
 */
import { bundleWorker, COMPATIBILITY_DATE } from '@tollgate/test-utils'
import { Miniflare } from 'miniflare'
import { parseList } from 'structured-headers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let mf: Miniflare
let script: string
let lazyScript: string

const start = (code: string) =>
  new Miniflare({ modules: true, script: code, compatibilityDate: COMPATIBILITY_DATE })

beforeAll(async () => {
  script = await bundleWorker(new URL('./worker.ts', import.meta.url))
  lazyScript = await bundleWorker(new URL('./lazy-worker.ts', import.meta.url))
  mf = start(lazyScript)
  await mf.ready
}, 60_000)

afterAll(async () => {
  await mf?.dispose()
})

const get = (path: string, ip: string) =>
  mf.dispatchFetch(`http://shiplane.test${path}`, { headers: { 'CF-Connecting-IP': ip } })

describe('@tollgate/hono in workerd', () => {
  // Workers forbid random values, timers and I/O at global scope, where `app.use(rateLimit(…))`
  // runs: building the middleware must do none of them.
  it('starts with the middleware built at module scope, without nodejs_compat', async () => {
    const atModuleScope = start(script)
    try {
      await atModuleScope.ready
      const res = await atModuleScope.dispatchFetch('http://shiplane.test/', {
        headers: { 'CF-Connecting-IP': '203.0.113.1' },
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe('2')
    } finally {
      await atModuleScope.dispose()
    }
  }, 60_000)

  // The other checks run on the same app with the middleware built on the first request.

  it('admits a burst of 3, then answers 429 with Retry-After and the rate-limit fields', async () => {
    const before = Math.floor(Date.now() / 1000)
    const responses = []
    for (let i = 0; i < 4; i++) responses.push(await get('/v1/quotes', '203.0.113.7'))
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429])
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual([
      '2',
      '1',
      '0',
      '0',
    ])
    const denied = responses[3]!
    // 1 token per 10 s: the next one in at most 10 s (less if the clock moved on meanwhile).
    const retryAfter = Number(denied.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(10)
    expect(denied.headers.get('content-type')).toBe('application/problem+json')
    // Full again 30 s after the burst: an epoch second, as GitHub sends it.
    const reset = Number(denied.headers.get('x-ratelimit-reset'))
    expect(reset).toBeGreaterThanOrEqual(before + 29)
    expect(reset).toBeLessThanOrEqual(before + 32)
    expect(parseList(denied.headers.get('ratelimit-policy')!)).toEqual([
      [
        'per-ip',
        new Map([
          ['q', 1],
          ['w', 10],
          ['tollgate-burst', 3],
        ]),
      ],
    ])
    const [item] = parseList(denied.headers.get('ratelimit')!)
    expect(item![0]).toBe('per-ip')
    expect(item![1].get('r')).toBe(0)
    expect(item![1].get('t')).toBe(retryAfter)
    expect(await denied.json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      status: 429,
      'violated-policies': ['per-ip'],
      retryAfter,
    })
    expect(denied.headers.get('access-control-expose-headers')).toContain('Retry-After')
  })

  it('keys clients by the address Cloudflare reports', async () => {
    const other = await get('/v1/quotes', '198.51.100.20')
    expect(other.status).toBe(200)
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2')
  })

  it('gives failed requests their charge back and skips health checks', async () => {
    const ip = '192.0.2.55'
    for (let i = 0; i < 5; i++) {
      const failed = await get('/fail', ip)
      expect(failed.status).toBe(500)
      expect(failed.headers.get('x-ratelimit-remaining')).toBe('2')
    }
    const health = await get('/health', ip)
    expect(health.status).toBe(200)
    expect(health.headers.get('x-ratelimit-remaining')).toBeNull()
    expect((await get('/v1/quotes', ip)).headers.get('x-ratelimit-remaining')).toBe('2')
  })
})
