/**
 * The same small app on every adapter and transport: a user set by an auth-like middleware from
 * `x-test-user`, the rate limiter, then one catch-all handler. Express (5 and 4) and Koa (3 and
 * 2) are served on a real socket and driven by supertest; Hono through `app.request()` and through
 * `@hono/node-server` on a real socket.
 */
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { serve } from '@hono/node-server'
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import type { ManualClock } from '@tollgate/test-utils'
import express, { type Express, type NextFunction, type Request, type Response } from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import { Hono } from 'hono'
import Koa from 'koa'
import Koa2 from 'koa2'
import request from 'supertest'
import type { AppSetup, Exchange, SentRequest } from './exchange.js'
import { rateLimit as fastifyRateLimit } from './fastify-adapter.js'

export type Client = {
  send(req: SentRequest): Promise<Exchange>
  close(): Promise<void>
  /** `http://127.0.0.1:<port>` of a target served on a real socket. */
  readonly origin?: () => string
}

export type Target = { readonly name: string; start(setup: AppSetup): Promise<Client> }

/**
 * What the catch-all handler answers, the same on every framework: `/fail…` is a 500 and
 * `/fail/advance/<ms>` moves the clock first (a slow request, for refunds across a window
 * boundary); `/llm/…` answers as an LLM API does (see `llmReply`); everything else is a 200.
 */
function reply(path: string, clock: ManualClock, header: Header): Reply {
  const slow = /^\/fail\/advance\/(\d+)$/.exec(path)
  if (slow !== null) clock.advance(Number(slow[1]))
  if (path.startsWith('/llm/')) return llmReply(path, header)
  return path.startsWith('/fail')
    ? { status: 500, body: 'failed', type: 'text/plain' }
    : { status: 200, body: 'ok', type: 'text/plain' }
}

type Header = (name: string) => string | undefined

/** An answer: its text whole, or bytes sent piece by piece (a stream). */
type Reply = { status: number; body: string | Uint8Array[]; type: string }

const utf8 = new TextEncoder()

/**
 * An OpenAI-style answer reporting `<total>` tokens: `/llm/json/<total>` a chat completion,
 * `/llm/sse/<total>` the same streamed (`text/event-stream`, usage in the last chunk), its bytes
 * cut where `x-test-split` says (offsets, comma-separated); `/llm/none` reports no usage,
 * `/llm/fail` is a 503 without usage, as an upstream error is.
 */
function llmReply(path: string, header: Header): Reply {
  const [, , kind, figure] = path.split('/')
  const total = Number(figure ?? 0)
  const usage = { prompt_tokens: 10, completion_tokens: total - 10, total_tokens: total }
  if (kind === 'json') {
    const body = { id: 'c1', choices: [{ message: { content: 'héllo 😀' } }], usage }
    return { status: 200, body: JSON.stringify(body), type: 'application/json' }
  }
  if (kind === 'sse') {
    const events = [
      { choices: [{ delta: { content: 'hé' } }], usage: null },
      { choices: [{ delta: { content: 'llo 😀' } }], usage: null },
      { choices: [], usage },
    ]
    const text = `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`
    const bytes = utf8.encode(text)
    const cuts = (header('x-test-split') ?? '').split(',').filter(Boolean).map(Number)
    const points = [0, ...cuts.filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b)]
    const chunks = points.map((at, i) => bytes.slice(at, points[i + 1] ?? bytes.length))
    return { status: 200, body: chunks, type: 'text/event-stream' }
  }
  if (kind === 'fail')
    return { status: 503, body: '{"error":"overloaded"}', type: 'application/json' }
  return { status: 200, body: '{"id":"c1"}', type: 'application/json' }
}

/** The request's estimate, from `x-test-estimate`, for apps set up with `estimate`. */
const estimateOf = (value: string | undefined) => (value === undefined ? undefined : Number(value))

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/** Express 5, or 4 (which declares the same API as far as this app goes). */
function expressTarget(name: string, createApp: () => Express): Target {
  return {
    name,
    async start(setup) {
      const app = createApp()
      app.use((req, _res, next) => {
        const user = one(req.headers['x-test-user'])
        if (user !== undefined) (req as { user?: unknown }).user = { id: user }
        next()
      })
      app.use(
        expressRateLimit(setup.rules, {
          ...setup.options,
          skip: (req) => setup.skip(req.path),
          plan: (req) => one(req.headers['x-test-plan']),
          identities: (req) => ({ account: one(req.headers['x-account']) }),
          refund: setup.refund,
          onShadowDenied: setup.onShadowDenied,
          settle: setup.settle,
          estimate: setup.estimate
            ? (req) => estimateOf(one(req.headers['x-test-estimate']))
            : undefined,
        }),
      )
      app.use((req, res) => {
        const { status, body, type } = reply(req.path, setup.clock, (name) =>
          one(req.headers[name]),
        )
        res.statusCode = status
        res.setHeader('Content-Type', type)
        if (typeof body === 'string') return void res.end(body)
        for (const chunk of body) res.write(chunk)
        res.end()
      })
      app.use((error: unknown, _req: Request, _res: Response, next: NextFunction) => {
        setup.onAppError(error)
        next(error)
      })
      return supertestClient(app.listen(0))
    },
  }
}

/** Koa 3, or 2. */
function koaTarget(name: string, KoaApp: typeof Koa): Target {
  return {
    name,
    async start(setup) {
      const app = new KoaApp()
      app.silent = true
      app.on('error', setup.onAppError)
      app.use((ctx, next) => {
        const user = ctx.get('x-test-user')
        if (user !== '') Object.assign(ctx.state, { user: { id: user } })
        return next()
      })
      app.use(
        koaRateLimit(setup.rules, {
          ...setup.options,
          skip: (ctx) => setup.skip(ctx.path),
          plan: (ctx) => ctx.get('x-test-plan') || undefined,
          identities: (ctx) => ({ account: ctx.get('x-account') || undefined }),
          refund: setup.refund,
          onShadowDenied: setup.onShadowDenied,
          settle: setup.settle,
          estimate: setup.estimate
            ? (ctx) => estimateOf(ctx.get('x-test-estimate') || undefined)
            : undefined,
        }),
      )
      app.use((ctx) => {
        const { status, body, type } = reply(
          ctx.path,
          setup.clock,
          (name) => ctx.get(name) || undefined,
        )
        ctx.status = status
        ctx.set('Content-Type', type)
        ctx.body =
          typeof body === 'string' ? body : Readable.from(body.map((chunk) => Buffer.from(chunk)))
      })
      // Bound to the IPv4 loopback, where Express listens on `::`: one sees 127.0.0.1, the other
      // ::ffff:127.0.0.1, and both must key the client the same.
      return supertestClient(app.listen(0, '127.0.0.1'))
    },
  }
}

function honoApp(setup: AppSetup, getConnInfo?: () => { remote: { address: string } }): Hono {
  const app = new Hono()
  app.onError((error, c) => {
    setup.onAppError(error)
    return c.text('Internal Server Error', 500)
  })
  app.use(async (c, next) => {
    const user = c.req.header('x-test-user')
    if (user !== undefined) c.set('user' as never, { id: user } as never)
    await next()
  })
  app.use(
    honoRateLimit(setup.rules, {
      ...setup.options,
      ...(getConnInfo === undefined ? {} : { getConnInfo }),
      skip: (c) => setup.skip(c.req.path),
      plan: (c) => c.req.header('x-test-plan'),
      identities: (c) => ({ account: c.req.header('x-account') }),
      refund: setup.refund,
      onShadowDenied: setup.onShadowDenied,
      settle: setup.settle,
      estimate: setup.estimate ? (c) => estimateOf(c.req.header('x-test-estimate')) : undefined,
    }),
  )
  app.all('*', (c) => {
    const { status, body, type } = reply(c.req.path, setup.clock, (name) => c.req.header(name))
    if (typeof body === 'string') return c.body(body, status as 200, { 'Content-Type': type })
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of body) controller.enqueue(chunk)
        controller.close()
      },
    })
    return c.body(stream, status as 200, { 'Content-Type': type })
  })
  return app
}

const honoRequestTarget: Target = {
  name: 'hono (app.request)',
  async start(setup) {
    // No socket here: the connection info is given, as on a runtime Tollgate does not detect.
    const app = honoApp(setup, () => ({ remote: { address: '127.0.0.1' } }))
    return {
      async send(req) {
        const res = await app.request(req.path, { method: req.method, headers: req.headers })
        return {
          status: res.status,
          headers: Object.fromEntries(res.headers),
          body: await res.text(),
        }
      },
      async close() {},
    }
  },
}

const honoNodeTarget: Target = {
  name: 'hono (@hono/node-server)',
  async start(setup) {
    // The address comes from the adapter's own detection of @hono/node-server.
    const app = honoApp(setup)
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', resolve))
    return supertestClient(server as import('node:http').Server)
  },
}

/** Fastify, with the adapter the writing-an-adapter guide builds on the adapter kit. */
const fastifyTarget: Target = {
  name: 'fastify (guide adapter, supertest)',
  async start(setup) {
    const app = Fastify()
    app.setErrorHandler((error, _request, reply) => {
      setup.onAppError(error)
      return reply.code(500).type('text/plain').send('Internal Server Error')
    })
    app.addHook('onRequest', async (request) => {
      const user = one(request.headers['x-test-user'])
      if (user !== undefined) (request as { user?: unknown }).user = { id: user }
    })
    app.addHook(
      'onRequest',
      fastifyRateLimit(setup.rules, {
        ...setup.options,
        skip: (request) => setup.skip(request.url.split('?')[0]!),
        plan: (request) => one(request.headers['x-test-plan']),
        identities: (request) => ({ account: one(request.headers['x-account']) }),
        refund: setup.refund,
        onShadowDenied: setup.onShadowDenied,
        settle: setup.settle,
        estimate: setup.estimate
          ? (request) => estimateOf(one(request.headers['x-test-estimate']))
          : undefined,
      }),
    )
    app.all('/*', (request, answer) => {
      const { status, body, type } = reply(request.url.split('?')[0]!, setup.clock, (name) =>
        one(request.headers[name]),
      )
      // Bytes, as Fastify adds a charset to a string's JSON Content-Type.
      const sent =
        typeof body === 'string'
          ? Buffer.from(body)
          : Readable.from(body.map((c) => Buffer.from(c)))
      return answer.code(status).type(type).send(sent)
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return supertestClient(app.server)
  },
}

function supertestClient(server: import('node:http').Server): Client {
  return {
    async send(req) {
      if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
      const method = req.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'
      const { port } = server.address() as AddressInfo
      const res = await request(`http://127.0.0.1:${port}`)[method](req.path).set(req.headers)
      return {
        status: res.status,
        headers: res.headers as Record<string, string>,
        body: res.text,
      }
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        // The test has its answers. A request dropped because its client left is never
        // answered, and its connection, still open on fetch's side, would hold close() until
        // fetch's keep-alive ends (4 s): end it now.
        server.closeAllConnections()
      }),
    origin: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  }
}

export const TARGETS: readonly Target[] = [
  expressTarget('express (supertest)', express),
  expressTarget('express 4 (supertest)', express4),
  koaTarget('koa (supertest)', Koa),
  koaTarget('koa 2 (supertest)', Koa2),
  honoRequestTarget,
  honoNodeTarget,
  fastifyTarget,
]
