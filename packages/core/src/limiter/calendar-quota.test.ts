// A monthly quota resets on the first of the next month, and every field a client reads says
// so: Retry-After, RateLimit's t, the legacy reset time.
import { describe, expect, it } from 'vitest'
import { createResponder } from '../response/responder.js'
import { sent } from '../response/test-fixtures.js'
import { defineRules } from '../rules/define-rules.js'
import { createLimiter } from './create-limiter.js'
import { STORES } from './test-stores.js'
import type { Verdict } from './types.js'

const monthly = (timeZone?: string) =>
  defineRules([
    {
      id: 'monthly',
      match: { identity: 'api_key' },
      algorithm: 'fixed_window',
      limit: 2,
      window: 'month',
      ...(timeZone === undefined ? {} : { timeZone }),
    },
  ])

const facts = {
  method: 'GET',
  path: '/v1/things',
  identities: { ip: '203.0.113.7', api_key: 'k_1' },
}

describe.each(STORES)('a monthly quota (%s)', (_name, makeStore) => {
  it.each([
    // 31 January, 23:00 UTC: one hour to 1 February 00:00 UTC.
    ['UTC', undefined, Date.UTC(2026, 0, 31, 23), Date.UTC(2026, 1, 1)],
    // 28 February 2028 (a leap year), noon UTC: a day and a half to 1 March.
    ['UTC', undefined, Date.UTC(2028, 1, 28, 12), Date.UTC(2028, 2, 1)],
    // 31 October, 20:00 UTC is 21:00 in Paris (UTC+1 since the 25th): November starts at 23:00 UTC.
    ['Paris', 'Europe/Paris', Date.UTC(2026, 9, 31, 20), Date.UTC(2026, 9, 31, 23)],
  ])(
    'in %s, denies until the first of the next month, and says so',
    async (_label, zone, now, reset) => {
      const limiter = createLimiter({ rules: monthly(zone), store: makeStore() })
      for (let i = 0; i < 2; i++) {
        expect(((await limiter.decide(facts, { now })) as Verdict).allowed).toBe(true)
      }
      const denied = (await limiter.decide(facts, { now })) as Verdict
      expect(denied.allowed).toBe(false)
      expect(denied.deciding).toMatchObject({
        retryAfterMs: reset - now,
        resetAfterMs: reset - now,
      })
      const headers = sent(createResponder({ legacyHeaders: true }).respond(denied, now).headers)
      const seconds = String((reset - now) / 1000)
      expect(headers['Retry-After']).toBe(seconds)
      expect(headers.RateLimit).toBe(`"monthly";r=0;t=${seconds}`)
      expect(headers['X-RateLimit-Reset']).toBe(String(reset / 1000))
      // A month's policy is the Gregorian mean month: 2,629,746 s.
      expect(headers['RateLimit-Policy']).toBe('"monthly";q=2;w=2629746')
      // The first request of the new month passes again.
      expect(((await limiter.decide(facts, { now: reset })) as Verdict).allowed).toBe(true)
    },
  )
})
