/**
 * `@tollgate/client` inside workerd: a Worker calls a Tollgate-limited origin (another Worker)
 * through a service binding. Both are bundled without Node built-ins and run without
 * `nodejs_compat`.
 */
import { bundleWorker, COMPATIBILITY_DATE } from '@tollgate/test-utils'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, expect, it } from 'vitest'

let mf: Miniflare

beforeAll(async () => {
  const [client, origin] = await Promise.all([
    bundleWorker(new URL('./client-worker.ts', import.meta.url)),
    bundleWorker(new URL('./origin-worker.ts', import.meta.url)),
  ])
  mf = new Miniflare({
    workers: [
      {
        name: 'client',
        modules: true,
        script: client,
        compatibilityDate: COMPATIBILITY_DATE,
        serviceBindings: { ORIGIN: 'origin' },
      },
      { name: 'origin', modules: true, script: origin, compatibilityDate: COMPATIBILITY_DATE },
    ],
  })
  await mf.ready
}, 60_000)

afterAll(async () => {
  await mf?.dispose()
})

it('learns the origin policy through the binding, and returns a refusal it cannot wait out', async () => {
  const res = await mf.dispatchFetch('http://client.test/?calls=4')
  expect(res.status).toBe(200)
  const body = (await res.json()) as {
    statuses: number[]
    retryAfter: Array<string | null>
    events: Array<Record<string, unknown>>
    learned: number
    budgetLeftMs: number
  }
  expect(body.statuses).toEqual([200, 200, 200, 429])
  // The third answer said r=0 for hours: longer than the 2 s budget, so the fourth call went out
  // (the server has the last word), was refused with an hour's Retry-After, and came back as is.
  const retryAfter = Number(body.retryAfter[3])
  expect(retryAfter).toBeGreaterThan(3500)
  expect(retryAfter).toBeLessThanOrEqual(3600)
  expect(body.events).toEqual([
    { type: 'give-up', reason: 'time', status: 429, url: 'https://origin.test/v1/quotes' },
  ])
  expect(body.learned).toBe(2) // the per-ip policy and the refusal's Retry-After
  expect(body.budgetLeftMs).toBeGreaterThan(0) // 4 of 100 spent in the local sliding log
}, 30_000)
