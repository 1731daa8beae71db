/**
 * The client against a server that is not Tollgate: a plain node:http server written here,
 * sending GitHub's fields (a fixed window per minute, `X-RateLimit-Reset` in epoch seconds,
 * `X-RateLimit-Resource`) and refusing with an HTTP-date `Retry-After`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ClientEvent, createClient } from '@tollgate/client'
import type { ManualClock } from '@tollgate/test-utils'
import { afterEach, expect, it } from 'vitest'
import { virtualTime } from './virtual-time.js'

const T0 = 1_700_000_070_000 // half-way through a minute
const LIMIT = 5
const WINDOW_MS = 60_000

function githubStyleServer(clock: ManualClock): Server {
  const used = new Map<number, number>()
  return createServer((_req, res) => {
    const now = clock.now()
    const window = Math.floor(now / WINDOW_MS)
    const resetMs = (window + 1) * WINDOW_MS
    const count = used.get(window) ?? 0
    const allowed = count < LIMIT
    if (allowed) used.set(window, count + 1)
    res.setHeader('X-RateLimit-Limit', String(LIMIT))
    res.setHeader('X-RateLimit-Remaining', String(LIMIT - (allowed ? count + 1 : count)))
    res.setHeader('X-RateLimit-Used', String(allowed ? count + 1 : count))
    res.setHeader('X-RateLimit-Reset', String(resetMs / 1000))
    res.setHeader('X-RateLimit-Resource', 'core')
    if (!allowed) {
      res.statusCode = 429
      res.setHeader('Retry-After', new Date(resetMs).toUTCString())
    }
    res.end(allowed ? '{}' : '{"message":"API rate limit exceeded"}')
  })
}

let server: Server | undefined
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
)

async function start() {
  const time = virtualTime(T0)
  server = githubStyleServer(time.clock)
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const statuses: number[] = []
  const send = async (request: Request) => {
    const response = await fetch(request)
    statuses.push(response.status)
    return response
  }
  return { time, statuses, send, url: `http://127.0.0.1:${port}/repos/o/r` }
}

it('a client that learns from X-RateLimit-* gets no 429 over 1,000 requests', async () => {
  const { time, statuses, send, url } = await start()
  const events: ClientEvent[] = []
  const client = createClient({
    ...time,
    fetch: send,
    random: () => 0.5,
    onEvent: (e) => events.push(e),
  })
  for (let i = 0; i < 1000; i++) await client.fetch(url)
  expect(statuses.filter((s) => s !== 200)).toEqual([])
  // 5 a minute: it waited for each of the 199 resets after the first window.
  expect(events.filter((e) => e.type === 'wait')).toHaveLength(199)
  expect(events[0]).toMatchObject({ type: 'wait', reason: 'learned', policy: 'core' })
}, 120_000)

it('a client that does not learn is refused, then recovers after the HTTP-date Retry-After', async () => {
  const { time, statuses, send, url } = await start()
  const client = createClient({ ...time, fetch: send, learn: false, random: () => 0.999 })
  for (let i = 0; i < LIMIT; i++) await client.fetch(url)
  const refusedAt = time.clock.now()
  const response = await client.fetch(url)
  expect(response.status).toBe(200)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 200])
  const advertised = Math.ceil(T0 / WINDOW_MS) * WINDOW_MS - T0 // to the end of the minute: 30 s
  const waited = time.clock.now() - refusedAt
  expect(waited).toBe(advertised + Math.floor(0.999 * 1001))
  expect(waited).toBeLessThanOrEqual(advertised + 1000) // the jitter bound
})
