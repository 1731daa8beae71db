import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIdentityResolver, type IdentityOptions, userIdOf } from './identities.js'

function identitiesOf(
  options: IdentityOptions,
  values: Record<string, string>,
  user?: string | number | null,
) {
  const resolver = createIdentityResolver({ logger: false, ...options })
  return resolver.identities({
    socketAddress: '10.0.0.5',
    header: (name) => values[name],
    user,
  })
}

describe('createIdentityResolver', () => {
  it('derives ip, api_key (x-api-key by default) and user', () => {
    expect(
      identitiesOf(
        { trustProxy: ['10.0.0.0/8'] },
        { 'x-forwarded-for': '203.0.113.7', 'x-api-key': ' k_123 ' },
        'u_9',
      ),
    ).toEqual({ ip: '203.0.113.7', api_key: 'k_123', user: 'u_9' })
  })

  it('leaves missing identities undefined, for the limiter to fall back or refuse', () => {
    expect(identitiesOf({}, {})).toEqual({ ip: '10.0.0.5', api_key: undefined, user: undefined })
    expect(identitiesOf({}, { 'x-api-key': '   ' }, '').api_key).toBeUndefined()
    expect(identitiesOf({}, {}, null).user).toBeUndefined()
  })

  it('stringifies a numeric user id', () => {
    expect(identitiesOf({}, {}, 42).user).toBe('42')
  })

  it('reads a configured API-key header name, matched in lower case', () => {
    expect(
      identitiesOf({ apiKeyHeader: 'X-Goog-Api-Key' }, { 'x-goog-api-key': 'g1' }).api_key,
    ).toBe('g1')
    expect(
      identitiesOf({ apiKeyHeader: 'X-Goog-Api-Key' }, { 'x-api-key': 'k' }).api_key,
    ).toBeUndefined()
    expect(identitiesOf({ apiKeyHeader: false }, { 'x-api-key': 'k' }).api_key).toBeUndefined()
  })

  it('ignores Authorization: Bearer unless bearerAsApiKey is on; the API-key header wins', () => {
    const bearer = { authorization: 'Bearer tok_abc' }
    expect(identitiesOf({}, bearer).api_key).toBeUndefined()
    expect(identitiesOf({ bearerAsApiKey: true }, bearer).api_key).toBe('tok_abc')
    expect(
      identitiesOf({ bearerAsApiKey: true }, { authorization: 'bearer\ttok_abc' }).api_key,
    ).toBe('tok_abc')
    expect(
      identitiesOf({ bearerAsApiKey: true }, { authorization: 'Basic dXNlcg==' }).api_key,
    ).toBeUndefined()
    expect(
      identitiesOf({ bearerAsApiKey: true }, { authorization: 'Bearertok' }).api_key,
    ).toBeUndefined()
    expect(
      identitiesOf({ bearerAsApiKey: true }, { ...bearer, 'x-api-key': 'k_header' }).api_key,
    ).toBe('k_header')
  })

  it('treats an API key longer than maxApiKeyLength as absent', () => {
    expect(identitiesOf({}, { 'x-api-key': 'k'.repeat(257) }).api_key).toBeUndefined()
    expect(identitiesOf({}, { 'x-api-key': 'k'.repeat(256) }).api_key).toHaveLength(256)
    expect(identitiesOf({ maxApiKeyLength: 4 }, { 'x-api-key': 'k_123' }).api_key).toBeUndefined()
  })

  it('refuses an invalid header name or length at construction', () => {
    expect(() => createIdentityResolver({ apiKeyHeader: 'x api key' })).toThrow(/apiKeyHeader/)
    expect(() => createIdentityResolver({ maxApiKeyLength: 0 })).toThrow(/maxApiKeyLength/)
  })

  it('exposes the client address on its own', () => {
    const resolver = createIdentityResolver({ logger: false })
    expect(resolver.clientIp('2001:db8::1', () => undefined)).toEqual({
      ip: '2001:db8::1',
      key: '2001:db8::/64',
      hops: 0,
    })
  })
})

describe('userIdOf', () => {
  it('takes an id, or the id of a user object', () => {
    expect(userIdOf('u_1')).toBe('u_1')
    expect(userIdOf(42)).toBe(42)
    expect(userIdOf({ id: 'u_2', name: 'Ada' })).toBe('u_2')
    expect(userIdOf({ id: 7 })).toBe(7)
  })

  it('finds no user in anything else, so that the rule falls back as configured', () => {
    for (const value of [undefined, null, true, {}, { id: null }, { id: { nested: 1 } }, ['u_1']])
      expect(userIdOf(value)).toBeUndefined()
  })
})

// The bearer token was read by slicing and comparing characters; it is now one regular
// expression. The old reading, copied here, must give the same api_key for any Authorization.
function oldBearerToken(authorization: string | undefined): string | undefined {
  const value = authorization?.trim()
  if (value === undefined || value.length < 8) return undefined
  if (value.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  const c = value.charCodeAt(6)
  if (c !== 32 && c !== 9) return undefined
  return value.slice(7).trim()
}

describe('Authorization: Bearer, read as before', () => {
  const space = fc.constantFrom('', ' ', '\t', '  ', '\n', ' \t', '\r\n', '\u00a0', '\u2028')
  const scheme = fc.constantFrom(
    'bearer',
    'Bearer',
    'BEARER',
    'bEaReR',
    'beare',
    'bearers',
    'Basic',
    'ſearer',
    'bearer\u0130',
  )
  const token = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('tok_abc', 'x', '', 'a\nb', 'a\r\nb', 'a\u2028b', 'a \t b'),
  )
  const authorization = fc.tuple(space, scheme, space, token, space).map((parts) => parts.join(''))

  it('gives the same api_key for any header value', () => {
    fc.assert(
      fc.property(authorization, (value) => {
        const old = oldBearerToken(value)
        expect(
          identitiesOf({ bearerAsApiKey: true, maxApiKeyLength: 100_000 }, { authorization: value })
            .api_key,
        ).toBe(old === '' ? undefined : old)
      }),
      { numRuns: 5000 },
    )
  })
})
