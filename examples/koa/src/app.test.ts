import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createApp } from './app.js'

let now = Date.UTC(2026, 0, 1)
let server: Server
let base: string

beforeAll(async () => {
  server = createApp({ clock: { now: () => now } }).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const get = (key: string) => fetch(`${base}/`, { headers: { 'x-api-key': key } })

it('admits a burst of 10 per API key, then 429 until the next one is due (600 ms)', async () => {
  for (let i = 0; i < 10; i++) expect((await get('k_1')).status).toBe(200)
  const denied = await get('k_1')
  expect(denied.status).toBe(429)
  expect(denied.headers.get('retry-after')).toBe('1')
  expect(denied.headers.get('ratelimit')).toBe('"per-key";r=0;t=1')
  expect((await get('k_2')).status).toBe(200)
  now += 599
  expect((await get('k_1')).status).toBe(429)
  now += 1
  const next = await get('k_1')
  expect(next.status).toBe(200)
  expect(await next.json()).toEqual({ quote: 742 })
})

it('skips the health check', async () => {
  const health = await fetch(`${base}/health`)
  expect(health.status).toBe(200)
  expect(health.headers.get('ratelimit')).toBeNull()
})
