/**
 * Each adapter mounted on another framework (Express's rateLimit on Koa, …) refuses the first
 * request with ERR_RL_WRONG_FRAMEWORK naming the adapter to import, instead of failing deep
 * inside with a TypeError that says nothing of the mix-up. Run with the real frameworks.
 */
import { clockReader, isRateLimitError, mapStore, tokenBucket } from '@tollgate/core'
import { createRateLimit as expressCompose, rateLimit as expressRateLimit } from '@tollgate/express'
import { createRateLimit as honoCompose, rateLimit as honoRateLimit } from '@tollgate/hono'
import { createRateLimit as koaCompose, rateLimit as koaRateLimit } from '@tollgate/koa'
import express, { type ErrorRequestHandler } from 'express'
import express4 from 'express4'
import { Hono } from 'hono'
import Koa from 'koa'
import Koa2 from 'koa2'
import request from 'supertest'
import { describe, expect, it } from 'vitest'

const RULES = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
] as const

type Adapter = 'Express' | 'Koa' | 'Hono'

/** A middleware of `adapter`, as whatever the host framework takes. */
function middlewareOf(adapter: Adapter): never {
  const options = { logger: false as const, clock: { now: () => 0 } }
  if (adapter === 'Express') return expressRateLimit(RULES, options) as never
  if (adapter === 'Koa') return koaRateLimit(RULES, options) as never
  return honoRateLimit(RULES, options) as never
}

/** Hosts: each mounts a middleware, sends two requests, and hands back what failed them. */
const HOSTS: ReadonlyArray<readonly [string, Adapter, (mw: never) => Promise<unknown[]>]> = [
  ['Express 5', 'Express', (mw) => onExpress(express(), mw)],
  ['Express 4', 'Express', (mw) => onExpress(express4() as never, mw)],
  ['Koa 3', 'Koa', (mw) => onKoa(new Koa(), mw)],
  ['Koa 2', 'Koa', (mw) => onKoa(new Koa2() as never, mw)],
  ['Hono', 'Hono', (mw) => onHono(mw)],
]

async function onExpress(app: ReturnType<typeof express>, mw: never): Promise<unknown[]> {
  const errors: unknown[] = []
  app.use(mw)
  app.get('/', (_req, res) => void res.send('ok'))
  const handler: ErrorRequestHandler = (error, _req, res, _next) => {
    errors.push(error)
    res.status(500).end()
  }
  app.use(handler)
  await request(app).get('/')
  await request(app).get('/')
  return errors
}

async function onKoa(app: Koa, mw: never): Promise<unknown[]> {
  const errors: unknown[] = []
  app.silent = true
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      errors.push(error)
      ctx.status = 500
    }
  })
  app.use(mw)
  app.use((ctx) => {
    ctx.body = 'ok'
  })
  const server = app.callback()
  await request(server).get('/')
  await request(server).get('/')
  return errors
}

async function onHono(mw: never): Promise<unknown[]> {
  const errors: unknown[] = []
  const app = new Hono()
  app.onError((error, c) => {
    errors.push(error)
    return c.text('failed', 500)
  })
  app.use(mw)
  app.get('/', (c) => c.text('ok'))
  const env = { incoming: { socket: { remoteAddress: '192.0.2.1' } } }
  await app.request('/', {}, env)
  await app.request('/', {}, env)
  return errors
}

const PACKAGES: Record<Adapter, string> = {
  Express: '@tollgate/express',
  Koa: '@tollgate/koa',
  Hono: '@tollgate/hono',
}

const ADAPTERS: readonly Adapter[] = ['Express', 'Koa', 'Hono']

describe('an adapter mounted on the wrong framework', () => {
  const pairings = HOSTS.flatMap(([host, framework, mount]) =>
    ADAPTERS.filter((adapter) => adapter !== framework).map(
      (adapter) => [adapter, host, framework, mount] as const,
    ),
  )

  it.each(pairings)(
    "@tollgate/%s's rateLimit on %s names the mismatch and the adapter to import",
    async (adapter, _host, framework, mount) => {
      const errors = await mount(middlewareOf(adapter))
      // Every request is refused alike: nothing on a wrong framework can work.
      expect(errors).toHaveLength(2)
      for (const error of errors) {
        expect(isRateLimitError(error) && error.code).toBe('ERR_RL_WRONG_FRAMEWORK')
        expect((error as Error).message).toBe(
          `[tollgate] this is ${PACKAGES[adapter]}'s rateLimit, mounted on what looks like a ${framework} app: import rateLimit from ${PACKAGES[framework]}`,
        )
      }
    },
  )

  it.each(HOSTS)(
    'the right adapter on %s serves both requests',
    async (_host, framework, mount) => {
      expect(await mount(middlewareOf(framework))).toEqual([])
    },
  )
})

/** A middleware of `adapter` composed of parts (`createRateLimit`), for a small bundle. */
function composedOf(adapter: Adapter): never {
  const parts = { algorithms: { token_bucket: tokenBucket }, store: mapStore, clock: clockReader }
  const options = { logger: false as const, clock: { now: () => 0 } }
  if (adapter === 'Express') return expressCompose(parts)(RULES, options) as never
  if (adapter === 'Koa') return koaCompose(parts)(RULES, options) as never
  return honoCompose(parts)(RULES, options) as never
}

describe('an adapter composed of parts, mounted on the wrong framework', () => {
  // Only `rateLimit` looks at what it is handed; a composed middleware fails on its first
  // request all the same, with a TypeError (Hono's thrown, not returned as a rejection, which
  // Express 4 would ignore).
  const pairings = HOSTS.flatMap(([host, framework, mount]) =>
    ADAPTERS.filter((adapter) => adapter !== framework).map(
      (adapter) => [adapter, host, mount] as const,
    ),
  )

  it.each(pairings)('@tollgate/%s on %s fails each request', async (adapter, _host, mount) => {
    const errors = await mount(composedOf(adapter))
    expect(errors).toHaveLength(2)
    for (const error of errors) expect(error).toBeInstanceOf(TypeError)
  })

  it.each(HOSTS)(
    'the right adapter on %s serves both requests',
    async (_host, framework, mount) => {
      expect(await mount(composedOf(framework))).toEqual([])
    },
  )
})
