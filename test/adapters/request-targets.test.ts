/**
 * A route limit must hold whatever request target reaches the handler: Node accepts
 * absolute-form targets (`GET http://host/path`) and fragments, and the frameworks route them
 * through `url.parse`, which also turns backslashes into slashes. Raw request lines are sent
 * over a socket, as a client would, since HTTP client libraries normalise them away.
 */
import { type AddressInfo, connect, type Server } from 'node:net'
import { serve } from '@hono/node-server'
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

const LOGIN_ONCE = [
  {
    id: 'login',
    match: { identity: 'ip', route: 'GET /v1/login' },
    algorithm: 'fixed_window',
    limit: 1,
    window: '1m',
  },
] as const

/** Targets that Node's parser accepts and some framework may route to `GET /v1/login`. */
const TARGETS = [
  '/v1/login#x',
  '/v1/login#?x',
  '/V1/Login/',
  '/v1/login?q=1',
  'http://x/v1/login',
  'HTTP://X/V1/LOGIN',
  'https://user:pw@x:8443/v1/login?q',
  'http://[::1]:80/v1/login',
  'http:///v1/login',
  '/v1\\login#x',
  '/v1\\login',
]

const options = { clock: manualClock(Date.UTC(2026, 0, 1)) }

type App = { name: string; listen(): Server | Promise<Server> }

const APPS: App[] = [
  ...[express, express4].map((create, i) => ({
    name: i === 0 ? 'express 5' : 'express 4',
    listen: () => {
      const app = create()
      app.use(expressRateLimit(LOGIN_ONCE, options))
      app.get('/v1/login', (_req, res) => {
        res.send('reached')
      })
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  ...[Koa, Koa2].map((KoaApp, i) => ({
    name: i === 0 ? 'koa 3' : 'koa 2',
    listen: () => {
      const app = new KoaApp()
      app.use(koaRateLimit(LOGIN_ONCE, options))
      // As koa-router routes by default: on `ctx.path`, ignoring case and a trailing slash.
      app.use((ctx) => {
        if (/^\/v1\/login\/?$/i.test(ctx.path)) ctx.body = 'reached'
      })
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  {
    name: 'hono (@hono/node-server)',
    listen: async () => {
      const app = new Hono()
      app.use(honoRateLimit(LOGIN_ONCE, options))
      app.get('/v1/login', (c) => c.text('reached'))
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
    },
  },
]

async function listening(server: Server): Promise<Server> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return server
}

/** Sends one request line as written and returns the status and body. */
function sendRaw(server: Server, target: string): Promise<{ status: number; body: string }> {
  const { port } = server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    })
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
  })
}

describe.each(APPS)('$name: a route limit holds for every request target', (app) => {
  it('counts every request that reaches the limited handler', async () => {
    const server = await app.listen()
    try {
      const first = await sendRaw(server, '/v1/login')
      expect(first).toMatchObject({ status: 200, body: expect.stringContaining('reached') })
      const statuses = new Map<string, number>()
      const reachedAgain: string[] = []
      for (const target of TARGETS) {
        const { status, body } = await sendRaw(server, target)
        statuses.set(target, status)
        if (body.includes('reached')) reachedAgain.push(`${target} → ${status}`)
      }
      expect(reachedAgain).toEqual([])
      // Every framework routes these two to the handler: they were denied, not left unrouted.
      expect(statuses.get('/v1/login#x')).toBe(429)
      expect(statuses.get('http://x/v1/login')).toBe(429)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
