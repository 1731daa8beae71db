import { type ServerType, serve } from '@hono/node-server'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createApp } from './app.js'

let now = Date.UTC(2026, 0, 1)
let server: ServerType
let base: string

beforeAll(async () => {
  const app = createApp({ clock: { now: () => now } })
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(info.port),
    )
  })
  base = `http://127.0.0.1:${port}`
})

afterAll(() => {
  server.close()
})

it('charges 5 for a bulk call and 1 for the rest, over a burst of 20', async () => {
  for (let i = 0; i < 3; i++) {
    const bulk = await fetch(`${base}/bulk`, { method: 'POST' })
    expect(bulk.status).toBe(200)
    expect(bulk.headers.get('ratelimit')).toMatch(new RegExp(`^"per-ip";r=${15 - 5 * i};`))
  }
  for (let i = 0; i < 5; i++) expect((await fetch(`${base}/`)).status).toBe(200)
  const denied = await fetch(`${base}/bulk`, { method: 'POST' })
  expect(denied.status).toBe(429)
  // 5 tokens at 10 a second: 500 ms, sent as a whole second.
  expect(denied.headers.get('retry-after')).toBe('1')
  now += 500
  expect((await fetch(`${base}/bulk`, { method: 'POST' })).status).toBe(200)
})
