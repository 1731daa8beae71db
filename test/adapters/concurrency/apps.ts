/**
 * One small app per adapter, served on a real socket, behind a limiter the test hands in: the
 * handler answers `/block/<gate>` once the test opens that gate, fails on `/throw/<gate>`,
 * streams a first chunk and then the rest on `/stream/<gate>`; on Hono, `/replace/<gate>` has
 * a middleware replace `c.res` after the handler.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { serve } from '@hono/node-server'
import type { CoreOptions, Limiter, LoadShedder, ResponseSettler } from '@tollgate/core'
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import express, { type Express, type NextFunction, type Request, type Response } from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import Koa from 'koa'
import Koa2 from 'koa2'
import { type Gates, gatedPath } from './gates.js'

export type Served = { readonly port: number; close(): Promise<void> }

/** Options every adapter takes alike (load shedding, the clock it samples on, settling). */
type SharedOptions = Pick<CoreOptions, 'clock' | 'legacyHeaders'> & {
  readonly shed?: LoadShedder<never>
  readonly settle?: ResponseSettler
}

export type App = {
  readonly name: string
  start(limiter: Limiter, gates: Gates, options?: SharedOptions): Promise<Served>
}

function expressApp(name: string, create: () => Express): App {
  return {
    name,
    async start(limiter, gates, options = {}) {
      const app = create()
      app.use(expressRateLimit(limiter, { logger: false, ...options }))
      app.use(async (req, res, next) => {
        const gated = gatedPath(req.path)
        if (gated === undefined) return void res.end('ok')
        const [behaviour, gate] = gated
        if (behaviour === 'stream') res.write('first;')
        await gates.enter(gate)
        if (behaviour === 'throw') return next(new Error('handler failed'))
        res.end(behaviour === 'stream' ? 'last' : 'ok')
      })
      app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.statusCode = 500
        res.end('failed')
      })
      return listening(app.listen(0, '127.0.0.1'))
    },
  }
}

function koaApp(name: string, KoaApp: typeof Koa): App {
  return {
    name,
    async start(limiter, gates, options = {}) {
      const app = new KoaApp()
      app.silent = true
      app.use(koaRateLimit(limiter, { logger: false, ...options }))
      app.use(async (ctx) => {
        const gated = gatedPath(ctx.path)
        if (gated === undefined) {
          ctx.body = 'ok'
          return
        }
        const [behaviour, gate] = gated
        if (behaviour === 'stream') {
          const body = new PassThrough()
          body.write('first;')
          ctx.body = body
          void gates.enter(gate).then(() => body.end('last'))
          return
        }
        await gates.enter(gate)
        if (behaviour === 'throw') throw new Error('handler failed')
        ctx.body = 'ok'
      })
      return listening(app.listen(0, '127.0.0.1'))
    },
  }
}

const encoder = new TextEncoder()

const honoNode: App = {
  name: 'hono (@hono/node-server)',
  async start(limiter, gates, options = {}) {
    const app = new Hono()
    app.onError((_error, c) => c.text('failed', 500))
    app.use(honoRateLimit(limiter, { logger: false, ...options }))
    // Replaces the handler's response with one of its own, as compress or etag middleware do.
    app.use('/replace/*', async (c, next) => {
      await next()
      c.res = new Response('replaced', { status: 201 })
    })
    app.all('*', async (c) => {
      const gated = gatedPath(c.req.path)
      if (gated === undefined) return c.text('ok')
      const [behaviour, gate] = gated
      if (behaviour === 'stream') {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode('first;'))
            void gates.enter(gate).then(() => {
              try {
                controller.enqueue(encoder.encode('last'))
                controller.close()
              } catch {
                // The client went away: the stream was cancelled.
              }
            })
          },
        })
        return c.body(body)
      }
      await gates.enter(gate)
      if (behaviour === 'throw') throw new Error('handler failed')
      return c.text('ok')
    })
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
    return listening(server)
  },
}

async function listening(server: Server): Promise<Served> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export const APPS: readonly App[] = [
  expressApp('express', express),
  expressApp('express 4', express4),
  koaApp('koa', Koa),
  koaApp('koa 2', Koa2),
  honoNode,
]
