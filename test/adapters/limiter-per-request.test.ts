/**
 * The reproduction of a limiter made inside a request handler, on Express: it never limits, and
 * says so once (WARN_LIMITER_PER_REQUEST). The warning is once per copy of the module that
 * watches, and test files share their worker's modules: each test imports a fresh copy.
 */
import type { RuleConfig } from '@tollgate/express'
import { manualClock } from '@tollgate/test-utils'
import express from 'express'
import request from 'supertest'
import { beforeEach, describe, expect, it, vi } from 'vitest'

let rateLimit: typeof import('@tollgate/express').rateLimit
beforeEach(async () => {
  vi.resetModules()
  ;({ rateLimit } = await import('@tollgate/express'))
})

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 1 },
]

describe('rateLimit(rules) called inside a handler', () => {
  it('never limits, and is reported once', async () => {
    const clock = manualClock(1_000_000)
    const warnings: string[] = []
    const logger = { warn: (message: string) => void warnings.push(message) }
    const app = express()
    app.get('/', (req, res, next) => rateLimit(RULES, { clock, logger })(req, res, next))
    app.get('/', (_req, res) => void res.send('ok'))
    const statuses: number[] = []
    for (let i = 0; i < 15; i++) statuses.push((await request(app).get('/')).status)
    expect(statuses.every((status) => status === 200)).toBe(true)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('[tollgate] WARN_LIMITER_PER_REQUEST: ')
  })

  it('a limiter made once limits, and nothing is reported', async () => {
    const clock = manualClock(1_000_000)
    const warnings: string[] = []
    const logger = { warn: (message: string) => void warnings.push(message) }
    const app = express()
    app.get('/', rateLimit(RULES, { clock, logger }), (_req, res) => void res.send('ok'))
    const statuses: number[] = []
    for (let i = 0; i < 15; i++) statuses.push((await request(app).get('/')).status)
    expect(statuses.filter((status) => status === 429)).toHaveLength(14)
    expect(warnings).toEqual([])
  })
})
