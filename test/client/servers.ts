/**
 * Tollgate-limited origins on each adapter, through its public `rateLimit` only, on a real
 * socket, with the test's clock.
 */

import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { rateLimit as expressRateLimit, type RuleConfig } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import type { ManualClock } from '@tollgate/test-utils'
import express from 'express'
import { Hono } from 'hono'
import Koa from 'koa'

export type Origin = { readonly url: string; close(): Promise<void> }
export type OriginFactory = {
  readonly name: string
  start(rules: readonly RuleConfig[], clock: ManualClock): Promise<Origin>
}

async function listening(server: Server): Promise<Origin> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

export const ORIGINS: readonly OriginFactory[] = [
  {
    name: 'express',
    start(rules, clock) {
      const app = express()
      app.use(expressRateLimit(rules, { clock }))
      app.use((_req, res) => {
        res.end('ok')
      })
      return listening(app.listen(0, '127.0.0.1'))
    },
  },
  {
    name: 'koa',
    start(rules, clock) {
      const app = new Koa()
      app.use(koaRateLimit(rules, { clock }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      return listening(app.listen(0, '127.0.0.1'))
    },
  },
  {
    name: 'hono',
    start(rules, clock) {
      const app = new Hono()
      app.use(honoRateLimit(rules, { clock }))
      app.all('*', (c) => c.text('ok'))
      return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
    },
  },
]
