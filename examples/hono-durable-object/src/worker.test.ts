/**
 * The worker bundled as for deployment and run in workerd (miniflare) with its Durable Object
 * binding, without nodejs_compat: every decision is a subrequest to a real `TollgateLimiter`.
 */
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bundleWorker, COMPATIBILITY_DATE, LIMITER_BINDING } from '../scripts/bundle.js'

let mf: Miniflare

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: await bundleWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: LIMITER_BINDING,
  })
  await mf.ready
}, 60_000)

afterAll(async () => {
  await mf?.dispose()
})

const get = (ip: string) =>
  mf.dispatchFetch('http://example.test/', { headers: { 'CF-Connecting-IP': ip } })

it('admits a burst of 5 per client IP, then 429 with Retry-After', async () => {
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    const res = await get('203.0.113.7')
    statuses.push(res.status)
    await res.text()
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  const denied = await get('203.0.113.7')
  expect(denied.status).toBe(429)
  // One token every 6 s.
  const retryAfter = Number(denied.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(6)
  await denied.text()
})

it('counts each client IP apart, with the fields the object decided', async () => {
  const other = await get('198.51.100.20')
  expect(other.status).toBe(200)
  expect(other.headers.get('ratelimit')).toBe('"edge-per-ip";r=4;t=6')
  expect(await other.text()).toBe('Hello from the edge')
})

it('admits exactly the burst of 60 requests from one client arriving at once', async () => {
  const responses = await Promise.all(Array.from({ length: 60 }, () => get('192.0.2.99')))
  const statuses = responses.map((r) => r.status)
  await Promise.all(responses.map((r) => r.text()))
  expect(statuses.filter((s) => s === 200)).toHaveLength(5)
  expect(statuses.filter((s) => s === 429)).toHaveLength(55)
})
