/**
 * The Durable Object store inside workerd: a Hono Worker whose rules live in `TollgateLimiter`
 * objects, and one whose object fails. Bundled without Node built-ins, run without nodejs_compat.
 */
import { bundleWorker, COMPATIBILITY_DATE } from '@tollgate/test-utils'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let mf: Miniflare

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: await bundleWorker(new URL('./durable-object-worker.ts', import.meta.url)),
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: {
      LIMITER: { className: 'TollgateLimiter', useSQLite: true },
      BROKEN: { className: 'BrokenLimiter', useSQLite: true },
    },
  })
  await mf.ready
}, 60_000)

afterAll(async () => {
  await mf?.dispose()
})

const get = async (path: string, ip = '203.0.113.7') => {
  const res = await mf.dispatchFetch(`http://worker.test${path}`, {
    headers: { 'CF-Connecting-IP': ip },
  })
  return { status: res.status, headers: res.headers, body: await res.text() }
}

const subrequests = async () => Number((await get('/subrequests')).body)

describe('the Durable Object store in workerd', () => {
  it('decides two rules of one client in one subrequest, and a denial takes from neither', async () => {
    const before = await subrequests()
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await get('/two-rules')).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    expect((await subrequests()) - before).toBe(4)
    // The denied request took nothing from the daily quota: 3 of 100 used.
    const denied = await get('/two-rules')
    expect(denied.headers.get('ratelimit')).toContain('"daily";r=97')
  })

  it('admits when the object fails and the rule fails open, never a 500', async () => {
    const res = await get('/broken-open')
    expect(res.status).toBe(200)
    expect(res.body).toBe('ok')
  })

  it('refuses with 503 when the object fails and the rule fails closed', async () => {
    const res = await get('/broken-closed')
    expect(res.status).toBe(503)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
  })
})
