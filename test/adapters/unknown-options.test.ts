/**
 * Every adapter's rateLimit() refuses, at start-up, an option it does not know, and takes every
 * one it documents: from JavaScript a misspelt or foreign option would otherwise do nothing.
 */
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { describe, expect, it } from 'vitest'

const RULES = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
] as const

/** Every option an adapter documents: core's, the request hooks, and its own. */
const EVERY_OPTION = {
  store: undefined,
  clock: { now: () => 0 },
  logger: false,
  onError: () => {},
  storeErrorRetryAfterMs: 1000,
  storeTimeoutMs: 1000,
  customIdentities: ['account'],
  trustProxy: 'loopback',
  proxyHeader: 'x-forwarded-for',
  ipv4Prefix: 32,
  ipv6Prefix: 64,
  ignoreWarnings: [],
  apiKeyHeader: 'x-api-key',
  bearerAsApiKey: false,
  maxApiKeyLength: 256,
  legacyHeaders: true,
  legacyReset: 'delta-seconds',
  standardHeaders: 'draft-11',
  shadowPolicies: false,
  partitionKey: false,
  exposeHeaders: false,
  missingIdentity: { status: 400 },
  skip: () => false,
  user: () => undefined,
  plan: () => undefined,
  identities: () => ({}),
  refund: 'failed',
  onShadowDenied: () => {},
  onLimited: () => {},
} as const

const ADAPTERS = [
  { name: 'express', rateLimit: expressRateLimit as (...args: unknown[]) => unknown, own: {} },
  { name: 'koa', rateLimit: koaRateLimit as (...args: unknown[]) => unknown, own: {} },
  {
    name: 'hono',
    rateLimit: honoRateLimit as (...args: unknown[]) => unknown,
    own: { getConnInfo: () => ({ remote: {} }) },
  },
]

describe.each(ADAPTERS)('$name rateLimit() options', ({ rateLimit, own }) => {
  it('takes every option it documents', () => {
    expect(() => rateLimit(RULES, { ...EVERY_OPTION, ...own })).not.toThrow()
  })

  it('refuses an unknown option at start-up, with the one meant', () => {
    for (const [option, meant] of [
      [{ trustproxy: true }, 'did you mean "trustProxy"?'],
      [{ headers: false }, 'standardHeaders'],
      [{ windowMs: 60_000 }, "a rule's window"],
      [{ max: 5 }, "a rule's limit"],
      [{ limit: 5 }, "a rule's limit"],
      [{ keyGenerator: () => 'k' }, 'match.identity'],
      [{ standardHeaders: true }, "'draft-11'"],
    ] as const) {
      expect(() => rateLimit(RULES, option), JSON.stringify(option)).toThrow(meant)
    }
  })
})

it('only Hono takes getConnInfo', () => {
  const getConnInfo = () => ({ remote: {} })
  expect(() => expressRateLimit(RULES, { getConnInfo } as never)).toThrow('unknown option')
  expect(() => koaRateLimit(RULES, { getConnInfo } as never)).toThrow('unknown option')
})
