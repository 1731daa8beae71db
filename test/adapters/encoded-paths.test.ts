/**
 * A route rule holds however the path is percent-encoded: with a real `POST /v1/:resource`
 * route, the frameworks hand the handler `labels:batch` for `/v1/labels%3Abatch` and
 * `/v1/%6cabels:batch`, so a rule on `POST /v1/labels:batch` must count those requests too.
 * Raw request lines over a socket, since HTTP client libraries re-encode paths.
 */
import { type AddressInfo, connect, type Server } from 'node:net'
import { serve } from '@hono/node-server'
import Router from '@koa/router'
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
    id: 'batch',
    match: { identity: 'ip', route: 'POST /v1/labels:batch' },
    algorithm: 'fixed_window',
    limit: 100,
    window: '1m',
    cost: 10,
  },
  {
    id: 'any-resource',
    match: { identity: 'ip', route: 'POST /v1/:resource' },
    algorithm: 'fixed_window',
    limit: 1000,
    window: '1m',
  },
] as const

/** Paths a router hands to `POST /v1/:resource`, with the parameter each one gives. */
const TARGETS = [
  '/v1/labels:batch',
  '/v1/labels%3Abatch',
  '/v1/labels%3abatch',
  '/v1/%6cabels:batch',
  '/v1/%6C%61bels%3Abatch',
  '/v1/labels%2Fbatch',
  '/v1/labels%253Abatch',
  // An encoded backslash is a character of its segment (Hono's decodeURI makes it a raw one).
  '/v1/labels%5Cbatch',
  '/v1/other',
]

const options = { clock: manualClock(Date.UTC(2026, 0, 1)) }

type App = { name: string; listen(): Promise<Server> }

const APPS: App[] = [
  ...[express, express4].map((create, i) => ({
    name: i === 0 ? 'express 5' : 'express 4',
    listen: () => {
      const app = create()
      app.use(expressRateLimit(RULES, options))
      app.post('/v1/:resource', (req, res) => {
        res.send(`resource=${req.params['resource']}`)
      })
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  ...[Koa, Koa2].map((KoaApp, i) => ({
    name: i === 0 ? 'koa 3 (@koa/router)' : 'koa 2 (@koa/router)',
    listen: () => {
      const app = new KoaApp()
      const router = new Router()
      router.post('/v1/:resource', (ctx) => {
        const { resource } = ctx.params
        ctx.body = `resource=${resource}`
      })
      app.use(koaRateLimit(RULES, options))
      app.use(router.routes() as unknown as Koa.Middleware)
      return listening(app.listen(0, '127.0.0.1') as unknown as Server)
    },
  })),
  {
    name: 'hono (@hono/node-server)',
    listen: () => {
      const app = new Hono()
      app.use(honoRateLimit(RULES, options))
      app.post('/v1/:resource', (c) => c.text(`resource=${c.req.param('resource')}`))
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
    },
  },
]

async function listening(server: Server): Promise<Server> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return server
}

type Reply = { status: number; policy: string; body: string }

/** Sends `POST <target>` as written; the status, RateLimit-Policy and body. */
function sendRaw(server: Server, target: string): Promise<Reply> {
  const { port } = server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      )
    })
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('end', () => {
      const head = text.slice(0, text.indexOf('\r\n\r\n'))
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        policy: /^ratelimit-policy: (.*)$/im.exec(head)?.[1] ?? '',
        body: text.slice(head.length + 4),
      })
    })
  })
}

describe.each(APPS)('$name: rules match the path the router dispatches on', (app) => {
  it('counts every encoding of a limited route under its rule', async () => {
    const server = await app.listen()
    try {
      const seen: Record<string, { resource: string | undefined; rules: string[] }> = {}
      for (const target of TARGETS) {
        const reply = await sendRaw(server, target)
        expect(reply.status, target).toBe(200)
        seen[target] = {
          resource: /resource=(.*)$/.exec(reply.body)?.[1],
          rules: [...reply.policy.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
        }
      }
      for (const [target, { resource, rules }] of Object.entries(seen)) {
        // Every request the route handled was counted by the route's rule…
        expect(rules, target).toContain('any-resource')
        // …and every one its handler saw as labels:batch by the batch rule.
        expect(rules.includes('batch'), target).toBe(resource === 'labels:batch')
      }
      // The frameworks really decode these (else the test would prove nothing).
      expect(seen['/v1/labels%3Abatch']?.resource).toBe('labels:batch')
      expect(seen['/v1/%6cabels:batch']?.resource).toBe('labels:batch')
      expect(seen['/v1/labels%2Fbatch']?.resource).toBe('labels/batch')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
