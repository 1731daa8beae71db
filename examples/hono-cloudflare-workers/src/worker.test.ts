/** The worker bundled as for deployment and run in workerd (miniflare), without nodejs_compat. */
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bundleWorker, COMPATIBILITY_DATE } from '../scripts/bundle.js'

let mf: Miniflare

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: await bundleWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
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
  for (let i = 0; i < 6; i++) statuses.push((await get('203.0.113.7')).status)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  const denied = await get('203.0.113.7')
  expect(denied.status).toBe(429)
  // One token every 6 s.
  const retryAfter = Number(denied.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(6)
  expect(denied.headers.get('access-control-expose-headers')).toContain('RateLimit')
  await denied.text()
})

it('counts each client IP apart', async () => {
  const other = await get('198.51.100.20')
  expect(other.status).toBe(200)
  expect(other.headers.get('ratelimit')).toBe('"edge-per-ip";r=4;t=6')
  expect(await other.text()).toBe('Hello from the edge')
})
