import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseRoute } from '../rules/route.js'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import { normalizePath } from './path-pattern.js'
import { decodePercents } from './percent-decoding.js'
import type { Verdict } from './types.js'

/** A segment's text as a router hands it to a handler: Express's `decodeURIComponent`. */
const routerDecoded = (segment: string) => decodeURIComponent(segment).toLowerCase()

/** The matching form read back: the two escapes kept in a segment, as the text they stand for. */
const unkept = (normal: string) =>
  normal.replace(/%2f|%25/g, (kept) => (kept === '%2f' ? '/' : '%'))

/** Any text, each character either as it is or percent-encoded (UTF-8, hex in either case). */
const encodedForms = (text: string) =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).chain((choices) =>
    fc.boolean().map((upper) =>
      [...text]
        .map((char, i) => {
          if (!choices[i] && char !== '%' && char !== '/') return char
          const escaped = encodeURIComponent(char)
          const all = escaped.startsWith('%')
            ? escaped
            : `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`
          return upper ? all.toUpperCase() : all.toLowerCase()
        })
        .join(''),
    ),
  )

const segmentText = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('/'))

describe('decodePercents', () => {
  it('decodes what the routers decode, keeps %2F and %25, and lowers hex digits', () => {
    expect(decodePercents('/v1/labels%3Abatch')).toBe('/v1/labels:batch')
    expect(decodePercents('/v1/%6cabels%3abatch')).toBe('/v1/labels:batch')
    expect(decodePercents('/v1/labels%2Fbatch')).toBe('/v1/labels%2fbatch')
    expect(decodePercents('/v1/%2541')).toBe('/v1/%2541')
    expect(decodePercents('/v1/50%')).toBe('/v1/50%25')
    expect(decodePercents('/v1/%zz%4')).toBe('/v1/%25zz%254')
    expect(decodePercents('/caf%C3%A9')).toBe('/café')
    // A run that is not UTF-8 stays as it is, as Hono and koa-router leave it.
    expect(decodePercents('/bad%C3%28')).toBe('/bad%c3%28')
    expect(decodePercents('/%C3%2F%A9')).toBe('/%c3%2f%a9')
  })

  it('gives every encoding of a segment the form of the segment itself', () => {
    const segment = segmentText.chain((text) =>
      encodedForms(text).map((encoded) => ({ text, encoded })),
    )
    fc.assert(
      fc.property(segment, ({ text, encoded }) => {
        expect(decodePercents(encoded)).toBe(decodePercents(encodeURIComponent(text)))
      }),
    )
  })

  it('agrees with the handler’s decoded parameter on every segment a router decodes', () => {
    const raw = fc.oneof(
      fc.string({ maxLength: 16 }),
      segmentText.chain(encodedForms),
      fc.stringMatching(/^(%[0-9a-fA-F]{2}|[a-z:%])*$/),
    )
    fc.assert(
      fc.property(raw, (segment) => {
        fc.pre(!segment.includes('/'))
        let decoded: string
        try {
          decoded = routerDecoded(segment)
        } catch {
          return // Express answers 400; there is no parameter to agree with
        }
        expect(unkept(decodePercents(segment).toLowerCase())).toBe(decoded)
      }),
    )
  })

  it('never adds or removes a segment, and is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (path) => {
        const once = decodePercents(path)
        expect(once.split('/').length).toBe(path.split('/').length)
        expect(decodePercents(once)).toBe(once)
      }),
    )
  })
})

describe('rules match the path the router dispatches on', () => {
  const rules: RuleConfig[] = [
    {
      id: 'batch',
      match: { identity: 'ip', route: 'POST /v1/labels:batch' },
      algorithm: 'fixed_window',
      limit: 100,
      window: '1m',
    },
    {
      id: 'resource',
      match: { identity: 'ip', route: 'POST /v1/:resource' },
      algorithm: 'fixed_window',
      limit: 100,
      window: '1m',
    },
    {
      id: 'encoded-literal',
      match: { identity: 'ip', route: 'GET /files/caf%C3%A9' },
      algorithm: 'fixed_window',
      limit: 100,
      window: '1m',
    },
  ]
  const limiter = createLimiter({ rules })
  const match = (method: string, path: string) =>
    (
      limiter.decide({ method, path, identities: { ip: '192.0.2.1' } }, { now: 0 }) as Verdict
    ).decisions.map((d) => d.rule)

  it('matches a literal route however its characters are encoded', () => {
    for (const path of [
      '/v1/labels:batch',
      '/v1/labels%3Abatch',
      '/v1/labels%3abatch',
      '/v1/%6cabels:batch',
      '/v1/%6C%61%62%65%6C%73%3A%62%61%74%63%68',
      '/V1/LABELS%3ABATCH/',
    ]) {
      expect(match('POST', path), path).toEqual(['batch', 'resource'])
    }
    expect(match('GET', '/files/café')).toEqual(['encoded-literal'])
    expect(match('GET', '/files/caf%c3%a9')).toEqual(['encoded-literal'])
    expect(match('GET', '/files/CAF%C3%89')).toEqual(['encoded-literal'])
  })

  it('keeps an encoded slash inside its segment, as the routers do', () => {
    expect(match('POST', '/v1/labels%2Fbatch')).toEqual(['resource'])
    expect(match('POST', '/v1/labels%2fbatch')).toEqual(['resource'])
    expect(match('POST', '/v1/labels/batch')).toEqual([])
    expect(match('POST', '/v1/labels%253Abatch')).toEqual(['resource'])
  })

  it('reads the URL a fetch runtime hands Hono (c.req.url) as the raw path', () => {
    // What a request target can hold (no raw spaces or control characters: they are sent
    // encoded), and no dot segment, which the URL parser resolves before any router sees it.
    const sendable = (text: string) =>
      !text.includes('%') &&
      text !== '.' &&
      text !== '..' &&
      [...text].every((char) => char.charCodeAt(0) > 32 && char.charCodeAt(0) !== 127)
    const segment = segmentText.filter(sendable).chain(encodedForms)
    fc.assert(
      fc.property(segment, (encoded) => {
        const path = `/v1/${encoded}`
        expect(normalizePath(new URL(path, 'http://api.test').href)).toBe(normalizePath(path))
      }),
    )
    // Not `c.req.path`: Hono's decodeURI turns %5C into a raw backslash, a separator here.
    expect(normalizePath(decodeURI('/v1/a%5cb'))).not.toBe(normalizePath('/v1/a%5cb'))
  })
})

describe('a route copied from Express', () => {
  it("reads labels\\:batch as labels:batch, and \\:id as the literal ':id'", () => {
    expect(parseRoute('POST /v1/labels\\:batch')).toMatchObject({
      segments: [{ literal: 'v1' }, { literal: 'labels:batch' }],
      text: 'POST /v1/labels:batch',
    })
    expect(parseRoute('/v1/\\:id')).toMatchObject({
      segments: [{ literal: 'v1' }, { literal: ':id' }],
      text: '/v1/\\:id',
    })
  })

  it('refuses any other backslash with the fix', () => {
    expect(parseRoute('/v1/labels\\(batch\\)')).toMatch(/backslash matches nothing.*"\\:"/)
  })
})
