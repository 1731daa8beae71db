/**
 * A client cannot choose its key by pushing a trusted proxy's forwarding line out of Node's
 * header list: Node keeps only the first `maxHeadersCount` (1000) lines. The client sends its
 * own `X-Forwarded-For: 6.6.6.6`, ~1,000 filler headers, and the proxy (the socket peer,
 * trusted) appends its line last. Raw requests over a socket, on every adapter.
 */
import { type AddressInfo, connect, type Server } from 'node:net'
import { serve } from '@hono/node-server'
import { createLimiter, type Limiter, type RuleDecision } from '@tollgate/core'
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { manualClock } from '@tollgate/test-utils'
import express from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import Koa from 'koa'
import Koa2 from 'koa2'
import { describe, expect, it } from 'vitest'

const RULES = [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 100,
    window: '1m',
  },
] as const

type Setup = { limiter: Limiter; options: object }
type App = { name: string; listen(setup: Setup): Promise<Server> }

const APPS: App[] = [
  ...[express, express4].map((create, i) => ({
    name: i === 0 ? 'express 5' : 'express 4',
    listen: ({ limiter, options }: Setup) => {
      const app = create()
      app.use(expressRateLimit(limiter, options))
      app.use((_req, res) => {
        res.send('ok')
      })
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  ...[Koa, Koa2].map((KoaApp, i) => ({
    name: i === 0 ? 'koa 3' : 'koa 2',
    listen: ({ limiter, options }: Setup) => {
      const app = new KoaApp()
      app.use(koaRateLimit(limiter, options))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  {
    name: 'hono (@hono/node-server)',
    listen: ({ limiter, options }: Setup) => {
      const app = new Hono()
      app.use(honoRateLimit(limiter, options))
      app.all('*', (c) => c.text('ok'))
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
    },
  },
]

async function listening(server: Server): Promise<Server> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return server
}

/** Sends a GET whose header lines are the client's own, then `fillers` more, then the proxy's. */
function sendRaw(server: Server, fillers: number): Promise<number> {
  const { port } = server.address() as AddressInfo
  const lines = ['GET /v1/quotes HTTP/1.1', 'Host: x', 'X-Forwarded-For: 6.6.6.6']
  for (let i = 0; i < fillers; i++) lines.push(`X-Filler-${i}: a`)
  lines.push('X-Forwarded-For: 203.0.113.9', 'Connection: close')
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`))
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])))
  })
}

describe.each(APPS)('$name: a header list Node may have cut', (app) => {
  it("trusts no forwarding header, so the client's own line cannot pick its key", async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1))
    const limiter = createLimiter({ rules: RULES, clock })
    const warnings: string[] = []
    const options = {
      trustProxy: 'loopback',
      logger: { warn: (message: string) => warnings.push(message) },
    }
    const server = await app.listen({ limiter, options })
    const remaining = (key: string) =>
      (limiter.check(key, 'per-ip', { cost: 0 }) as RuleDecision).remaining
    try {
      // A short list: the proxy's line is there and names the client.
      expect(await sendRaw(server, 10)).toBe(200)
      expect(remaining('ip:203.0.113.9')).toBe(99)
      // A cut one: keyed by the socket peer (the proxy), as without any forwarding header.
      expect(await sendRaw(server, 1000)).toBe(200)
      expect(await sendRaw(server, 1000)).toBe(200)
      expect(remaining('ip:6.6.6.6')).toBe(100)
      expect(remaining('ip:127.0.0.1')).toBe(98)
      const truncated = warnings.filter((w) => w.includes('WARN_HEADERS_TRUNCATED'))
      expect(truncated).toHaveLength(1)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
