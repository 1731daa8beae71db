import { describe, expect, it } from 'vitest'
import { quotaPerSeconds } from '../headers/policy-fields.js'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from './responder.js'
import { decision, sent, verdict } from './test-fixtures.js'

const respond = (v: Verdict, options: ResponderOptions = {}, now = 0) =>
  createResponder(options).respond(v, now)
const names = (v: Verdict, options: ResponderOptions = {}) =>
  respond(v, options).headers.map(([name]) => name)

describe('what is sent by default', () => {
  it('on an admitted request: the current-form fields, nothing else', () => {
    const response = respond(
      verdict([decision('api', { remaining: 42, resetAfterMs: 12_500 })]),
      {},
      1_700_000_000_000,
    )
    expect(response).toMatchObject({ allowed: true, status: undefined, body: undefined })
    expect(response.headers).toEqual([
      ['RateLimit-Policy', '"api";q=100;w=60'],
      ['RateLimit', '"api";r=42;t=13'],
    ])
  })

  it('X-RateLimit-* before them with legacyHeaders', () => {
    const v = verdict([decision('api', { remaining: 42, resetAfterMs: 12_500 })])
    expect(respond(v, { legacyHeaders: true }, 1_700_000_000_000).headers).toEqual([
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '42'],
      ['X-RateLimit-Reset', '1700000013'],
      ['RateLimit-Policy', '"api";q=100;w=60'],
      ['RateLimit', '"api";r=42;t=13'],
    ])
  })

  it('nothing at all when no rule matched', () => {
    expect(respond(verdict([])).headers).toEqual([])
  })

  it('X-RateLimit-Reset as seconds from now with legacyReset: delta-seconds', () => {
    const v = verdict([decision('api', { resetAfterMs: 12_500 })])
    expect(
      sent(
        respond(v, { legacyHeaders: true, legacyReset: 'delta-seconds' }, 1_700_000_000_000)
          .headers,
      )['X-RateLimit-Reset'],
    ).toBe('13')
  })

  it('turns each family on or off', () => {
    const v = verdict([decision('api')])
    expect(names(v, {})).toEqual(['RateLimit-Policy', 'RateLimit'])
    expect(names(v, { legacyHeaders: true, standardHeaders: false })).toEqual([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ])
    expect(names(v, { legacyHeaders: false, standardHeaders: false })).toEqual([])
  })
})

describe('Retry-After', () => {
  it.each([
    [1, '1'],
    [999, '1'],
    [1000, '1'],
    [1001, '2'],
    [59_999, '60'],
    [0, '1'], // never 0: an immediate retry helps nobody
  ])(
    'retryAfterMs %i is sent as %s, and the denied policy’s t matches',
    (retryAfterMs, seconds) => {
      const v = verdict([decision('api', { allowed: false, retryAfterMs, resetAfterMs: 60_000 })])
      const headers = sent(respond(v).headers)
      expect(headers['Retry-After']).toBe(seconds)
      expect(headers.RateLimit).toBe(`"api";r=0;t=${seconds}`)
    },
  )

  it('is the longest wait over the violated rules, and absent from admitted responses', () => {
    const v = verdict([
      decision('a', { allowed: false, retryAfterMs: 2000 }),
      decision('b', { allowed: false, retryAfterMs: 7500 }),
    ])
    expect(sent(respond(v).headers)['Retry-After']).toBe('8')
    expect(names(verdict([decision('a')]))).not.toContain('Retry-After')
  })
})

describe('the 429 problem body', () => {
  it('is RFC 9457 problem+json with the draft’s quota-exceeded type, naming every violated policy', () => {
    const v = verdict([
      decision('burst', {
        policy: { quota: 10, windowMs: 1000 },
        limit: 20,
        allowed: false,
        retryAfterMs: 100,
      }),
      decision('daily', {
        policy: { quota: 1000, windowMs: 86_400_000 },
        allowed: false,
        retryAfterMs: 3_600_000,
      }),
      decision('ok', { remaining: 5 }),
    ])
    const response = respond(v)
    expect(response.status).toBe(429)
    expect(JSON.parse(response.body!)).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota Exceeded',
      status: 429,
      detail:
        'Too many requests for the rate-limit policies "burst" (10 per 1 s, bursts of 20), "daily" (1000 per 86400 s). Retry after 3600 s.',
      'violated-policies': ['burst', 'daily'],
      retryAfter: 3600,
    })
    expect(response.problem).toEqual(JSON.parse(response.body!))
  })
})

describe('the 429 body text', () => {
  it('is always the JSON of the problem, whether the last one sent again or not', () => {
    const responder = createResponder()
    const policy = { quota: 100, windowMs: 60_000 }
    const api = (retryAfterMs: number) => [
      decision('api', { allowed: false, policy, retryAfterMs }),
    ]
    const cases = [
      api(1500),
      // The same seconds again (the last body sent again), then others, then the first again.
      api(1800),
      api(42_000),
      api(1500),
      [decision('a', { allowed: false }), decision('b', { allowed: false, retryAfterMs: 9000 })],
      // The same rule with other figures: fields (and body) of their own.
      [decision('api', { allowed: false, policy: { quota: 5, windowMs: 1000 } })],
      api(1500),
      [decision('r918273645546', { allowed: false, retryAfterMs: 3000 })],
    ]
    for (const decisions of cases) {
      const response = responder.respond(verdict(decisions), 0)
      expect(response.body).toBe(JSON.stringify(response.problem))
      expect(JSON.parse(response.body!).retryAfter).toBe(
        Number(sent(response.headers)['Retry-After']),
      )
    }
  })
})

describe('shadow rules', () => {
  const shadow = decision('shadow-new', { mode: 'shadow', allowed: false, retryAfterMs: 5000 })

  it('are left out of every header and never make a denial', () => {
    const response = respond(verdict([decision('api', { remaining: 9 }), shadow]))
    expect(response.allowed).toBe(true)
    expect(sent(response.headers).RateLimit).toBe('"api";r=9;t=60')
    expect(respond(verdict([shadow])).headers).toEqual([])
  })

  it('are listed with shadowPolicies: true', () => {
    const headers = sent(
      respond(verdict([decision('api'), shadow]), { shadowPolicies: true }).headers,
    )
    expect(headers.RateLimit).toBe('"api";r=99;t=60, "shadow-new";r=0;t=5')
  })
})

describe('Access-Control-Expose-Headers', () => {
  it('lists every name this configuration can send, on responses that carry rate-limit headers', () => {
    const expose = 'RateLimit, RateLimit-Policy, Retry-After'
    const responder = createResponder({ exposeHeaders: true })
    expect(responder.respond(verdict([decision('a')]), 0).headers).toContainEqual([
      'Access-Control-Expose-Headers',
      expose,
    ])
    expect(
      responder.respond(verdict([decision('a', { allowed: false })]), 0).headers,
    ).toContainEqual(['Access-Control-Expose-Headers', expose])
    expect(responder.respond(verdict([]), 0).headers).toEqual([])
    // The field that lists them is among those it sends.
    expect(responder.headerNames).toEqual([...expose.split(', '), 'Access-Control-Expose-Headers'])
    expect(createResponder({ legacyHeaders: true }).headerNames).toEqual([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
    ])
    expect(createResponder({ standardHeaders: 'draft-6' }).headerNames).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
      'Retry-After',
    ])
  })
})

describe('policies in whole seconds', () => {
  it('scales sub-second windows exactly', () => {
    expect(quotaPerSeconds(10, 100)).toBe('100;w=1')
    expect(quotaPerSeconds(1, 1500)).toBe('2;w=3')
    expect(quotaPerSeconds(100, 60_000)).toBe('100;w=60')
  })

  it('refreshes a rule’s cached policy when its quota changes', () => {
    const responder = createResponder()
    const first = responder.respond(
      verdict([decision('plan', { policy: { quota: 100, windowMs: 60_000 } })]),
      0,
    )
    const second = responder.respond(
      verdict([decision('plan', { policy: { quota: 500, windowMs: 60_000 } })]),
      0,
    )
    expect(sent(first.headers)['RateLimit-Policy']).toBe('"plan";q=100;w=60')
    expect(sent(second.headers)['RateLimit-Policy']).toBe('"plan";q=500;w=60')
  })
})

describe('partition keys', () => {
  it('are added when asked for, from the decision key or a chosen text', () => {
    const v = verdict([decision('api', { key: 'api_key:k_1' })])
    expect(sent(createResponder().respond(v, 0).headers).RateLimit).not.toContain('pk=')
    const byKey = sent(createResponder({ partitionKey: true }).respond(v, 0).headers).RateLimit
    const custom = createResponder({ partitionKey: (d) => `${d.rule}:tenant-7` })
    const byTenant = sent(custom.respond(v, 0).headers).RateLimit
    expect(byKey).toMatch(/^"api";r=99;t=60;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(byTenant).toMatch(/;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(byTenant).not.toBe(byKey)
  })
})

describe('options are checked at construction', () => {
  it.each([
    [{ standardHeaders: 'draft-13' }, 'standardHeaders'],
    [{ legacyReset: 'ms' }, 'legacyReset'],
    [{ missingIdentity: { status: 401 } }, 'missingIdentity'],
    [{ missingIdentity: { status: 500 } }, 'missingIdentity'],
  ])('%j names %s', (options, field) => {
    expect(() => createResponder(options as ResponderOptions)).toThrow(field)
  })

  /** The error createResponder throws for `options`, which must be ERR_RL_INVALID_OPTION. */
  const refusal = (options: Record<string, unknown>) => {
    try {
      createResponder(options as ResponderOptions)
    } catch (error) {
      return error as { code?: string; field?: string; message: string }
    }
    throw new Error(`accepted ${Object.keys(options).join(', ')}`)
  }

  // Truthiness would have read 'false' as true (headers on), 0 as false, 'yes' as true.
  it.each([
    ['legacyHeaders', 'false'],
    ['legacyHeaders', 0],
    ['shadowPolicies', 'no'],
    ['shadowPolicies', 1],
    ['exposeHeaders', 'yes'],
    ['exposeHeaders', {}],
  ])('%s: %j is refused: a boolean option takes true or false only', (field, value) => {
    expect(refusal({ [field]: value })).toMatchObject({
      code: 'ERR_RL_INVALID_OPTION',
      field,
      message: `[tollgate] ${field}: expected true or false, got ${JSON.stringify(value)}`,
    })
  })

  it.each([['yes'], [1], [{}]])(
    'partitionKey: %j is refused: true, false or a function',
    (value) => {
      expect(refusal({ partitionKey: value })).toMatchObject({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'partitionKey',
        message: `[tollgate] partitionKey: expected true, false or a function, got ${JSON.stringify(value)}`,
      })
    },
  )

  it('refuses a partition key where no field it sends carries one, in every configuration', () => {
    const keyed = verdict([decision('api', { key: 'api_key:k_1' })])
    const standards = [false, 'draft-6', 'draft-7', 'draft-8', 'draft-9', 'draft-10', 'draft-11']
    for (const standardHeaders of standards) {
      for (const legacyHeaders of [true, false]) {
        for (const partitionKey of [true, (d: { rule: string }) => d.rule]) {
          const options = { standardHeaders, legacyHeaders, partitionKey } as ResponderOptions
          const carries =
            typeof standardHeaders === 'string' && Number(standardHeaders.slice(6)) >= 8
          if (carries)
            expect(sent(createResponder(options).respond(keyed, 0).headers).RateLimit).toContain(
              'pk=',
            )
          else {
            expect(refusal(options)).toMatchObject({
              code: 'ERR_RL_INVALID_OPTION',
              field: 'partitionKey',
              message:
                "[tollgate] partitionKey: no field sends it: standardHeaders 'draft-8' or later does",
            })
          }
          const off = { standardHeaders, legacyHeaders, partitionKey: false } as ResponderOptions
          const unkeyed = sent(createResponder(off).respond(keyed, 0).headers)
          expect(Object.values(unkeyed).join()).not.toContain('pk=')
        }
      }
    }
  })

  it('takes true, false, undefined and null (the default) for each boolean option', () => {
    const v = verdict([decision('api')])
    for (const value of [undefined, null]) {
      const unset = { legacyHeaders: value, shadowPolicies: value, exposeHeaders: value }
      expect(names(v, unset as ResponderOptions)).toEqual(names(v))
      const keyless = createResponder({ partitionKey: value as undefined }).respond(v, 0).headers
      expect(Object.values(sent(keyless)).join()).not.toContain('pk=')
    }
    expect(names(v, { legacyHeaders: true })).toContain('X-RateLimit-Limit')
    expect(names(v, { exposeHeaders: true })).toContain('Access-Control-Expose-Headers')
    expect(names(v, { exposeHeaders: false })).not.toContain('Access-Control-Expose-Headers')
    const off = createResponder({ partitionKey: false }).respond(v, 0).headers
    expect(Object.values(sent(off)).join()).not.toContain('pk=')
  })

  it('names a value JSON cannot show instead of failing with a TypeError', () => {
    const cycle: { self?: unknown } = {}
    cycle.self = cycle
    expect(refusal({ standardHeaders: 11n })).toMatchObject({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'standardHeaders',
      message: expect.stringContaining('got 11n'),
    })
    expect(refusal({ legacyHeaders: cycle }).message).toBe(
      '[tollgate] legacyHeaders: expected true or false, got an object JSON cannot show',
    )
    expect(refusal({ exposeHeaders: () => true }).message).toContain('got a function')
  })

  // Node refuses these on every response (ERR_INVALID_CHAR, a 500); fetch's Headers trims spaces.
  it.each([
    ['a line break', 'Bearer\r\nSet-Cookie: a=b'],
    ['a character past U+00FF', 'Bearer realm="✓"'],
    ['a NUL', 'Bearer\u0000'],
    ['a leading space', ' Bearer'],
    ['a trailing tab', 'Bearer\t'],
    ['no text', 42],
  ])('missingIdentity: a wwwAuthenticate with %s is refused', (_what, wwwAuthenticate) => {
    expect(refusal({ missingIdentity: { status: 401, wwwAuthenticate } })).toMatchObject({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'missingIdentity',
    })
  })

  it('takes a wwwAuthenticate challenge with parameters, tabs and Latin-1 text', () => {
    const missing = decision('per-key', { allowed: false, retryAfterMs: undefined, key: undefined })
    for (const wwwAuthenticate of [
      'Bearer',
      'Bearer realm="api",\tscope="read"',
      'Basic realm="Café"',
    ]) {
      const responder = createResponder({ missingIdentity: { status: 401, wwwAuthenticate } })
      const response = responder.respond(verdict([missing], 'missing-identity'), 0)
      expect(response.status).toBe(401)
      expect(sent(response.headers)['WWW-Authenticate']).toBe(wwwAuthenticate)
    }
  })
})
