import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseForwarded, parseXForwardedFor } from './forwarded.js'

describe('parseXForwardedFor', () => {
  it('splits and trims, left to right', () => {
    expect(parseXForwardedFor('203.0.113.7, 10.0.0.2 ,10.0.0.3')).toEqual([
      '203.0.113.7',
      '10.0.0.2',
      '10.0.0.3',
    ])
  })

  it('keeps empty entries, the last one too: each stops the walk at the proxy that wrote it', () => {
    // A client's "9.9.9.9" and a proxy's empty line, as Node joins them.
    expect(parseXForwardedFor('9.9.9.9, ')).toEqual(['9.9.9.9', ''])
    expect(parseXForwardedFor('1.1.1.1,,2.2.2.2')).toEqual(['1.1.1.1', '', '2.2.2.2'])
  })

  it('has no entries in a header with no text', () => {
    expect(parseXForwardedFor('')).toEqual([])
    expect(parseXForwardedFor(' \t')).toEqual([])
  })
})

describe('parseForwarded (RFC 7239)', () => {
  it('§4 example: for="_gazonk" is an obfuscated identifier, not an address', () => {
    expect(parseForwarded('for="_gazonk"')).toEqual([undefined])
  })

  it('§4 example: For="[2001:db8:cafe::17]:4711" (name in any case, quoted, bracketed, port)', () => {
    expect(parseForwarded('For="[2001:db8:cafe::17]:4711"')).toEqual(['[2001:db8:cafe::17]:4711'])
  })

  it('§4 example: for=192.0.2.60;proto=http;by=203.0.113.43', () => {
    expect(parseForwarded('for=192.0.2.60;proto=http;by=203.0.113.43')).toEqual(['192.0.2.60'])
  })

  it('§4 example: for=192.0.2.43, for=198.51.100.17 (two hops, left to right)', () => {
    expect(parseForwarded('for=192.0.2.43, for=198.51.100.17')).toEqual([
      '192.0.2.43',
      '198.51.100.17',
    ])
  })

  it('§6 examples: "unknown" and obfuscated nodes name no address', () => {
    expect(parseForwarded('for=unknown, for=UNKNOWN, for=_hidden, for="_SEVKISEK"')).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ])
  })

  it('reads quoted values with escapes and separators inside the quotes', () => {
    expect(parseForwarded('for="192.0.2.1";by="a,b;c", for="\\"x\\""')).toEqual([
      '192.0.2.1',
      '"x"',
    ])
  })

  it('gives undefined for an element with no for, or with for twice', () => {
    expect(parseForwarded('proto=https;by=10.0.0.1, for=192.0.2.9')).toEqual([
      undefined,
      '192.0.2.9',
    ])
    expect(parseForwarded('for=1.1.1.1;for=2.2.2.2')).toEqual([undefined])
  })

  it('gives undefined for an empty element, the last one too (it stops the walk)', () => {
    // A client's "for=9.9.9.9" and a proxy's empty line, as Node joins them.
    expect(parseForwarded('for=9.9.9.9, ')).toEqual(['9.9.9.9', undefined])
    expect(parseForwarded(' , for=192.0.2.1 ,, ')).toEqual([
      undefined,
      '192.0.2.1',
      undefined,
      undefined,
    ])
  })

  it('has no elements in a header with no text', () => {
    expect(parseForwarded('')).toEqual([])
    expect(parseForwarded(' \t')).toEqual([])
  })

  it('keeps a properly quoted value with a comma in it as one element', () => {
    expect(parseForwarded('for="_a,b"')).toEqual([undefined])
    expect(parseForwarded('for="_a,b", for=192.0.2.1')).toEqual([undefined, '192.0.2.1'])
  })

  it('recovers the elements after a malformed one, so a proxy-appended element survives', () => {
    // The client wrote an unterminated quote; its proxy appended a well-formed element.
    expect(parseForwarded('for="1.2.3.4, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
    expect(parseForwarded('for, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
    expect(parseForwarded('for="a"junk, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
  })

  it('a quote the client leaves open cannot close inside the proxy element and swallow it', () => {
    // The client's open quote would end at the proxy's first quote, followed by "[" or "h".
    expect(parseForwarded('for="x, for="[2001:db8:c::1]"')).toEqual([undefined, '[2001:db8:c::1]'])
    expect(parseForwarded('for=1.2.3.4;x=", for="[2001:db8:c::1]:_p";proto="https"')).toEqual([
      undefined,
      '[2001:db8:c::1]:_p',
    ])
    expect(parseForwarded('x="\\, proto="https";for=198.51.100.17')).toEqual([
      undefined,
      '198.51.100.17',
    ])
  })

  it('whatever a client writes, the element a proxy appends after it is read as if alone', () => {
    const clientText = fc.string({
      maxLength: 24,
      unit: fc.constantFrom(...'for=_x1.:[]"\\ ,;'.split('')),
    })
    const address = fc.constantFrom(
      '198.51.100.17',
      '"198.51.100.17:4711"',
      '"[2001:db8:cafe::17]"',
      '"[2001:db8:cafe::17]:_p1"',
      'unknown',
      '"_hidden"',
    )
    const proxyElement = fc
      .tuple(
        address,
        fc.constantFrom('for=%', 'for=%;proto=https;by="[::1]:80"', 'proto="http";for=%'),
      )
      .map(([node, element]) => element.replace('%', node))
    fc.assert(
      fc.property(clientText, proxyElement, (client, proxy) => {
        const alone = parseForwarded(proxy)
        expect(alone).toHaveLength(1)
        expect(parseForwarded(`${client}, ${proxy}`).at(-1)).toBe(alone[0])
      }),
      { numRuns: 2000 },
    )
  })
})
