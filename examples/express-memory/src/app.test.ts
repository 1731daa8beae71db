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

it('admits a burst of 20, then answers 429 with Retry-After until a token refills', async () => {
  const statuses: number[] = []
  for (let i = 0; i < 20; i++) statuses.push((await fetch(`${base}/`)).status)
  expect(statuses).toEqual(Array(20).fill(200))
  const denied = await fetch(`${base}/`)
  expect(denied.status).toBe(429)
  expect(denied.headers.get('retry-after')).toBe('1')
  expect(denied.headers.get('ratelimit')).toBe('"per-ip";r=0;t=1')
  expect(denied.headers.get('content-type')).toBe('application/problem+json')
  now += 100
  const refilled = await fetch(`${base}/`)
  expect(refilled.status).toBe(200)
  expect(await refilled.text()).toBe('Hello')
})

it('leaves the health check unlimited', async () => {
  const health = await fetch(`${base}/health`)
  expect(health.status).toBe(200)
  expect(health.headers.get('ratelimit')).toBeNull()
})

it('allows 5 logins a minute', async () => {
  now += 60_000
  const statuses: number[] = []
  for (let i = 0; i < 6; i++)
    statuses.push((await fetch(`${base}/login`, { method: 'POST' })).status)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
})
