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

  it('drops a trailing empty entry but keeps an empty one in the middle (it stops the walk)', () => {
    expect(parseXForwardedFor('1.1.1.1, ')).toEqual(['1.1.1.1'])
    expect(parseXForwardedFor('1.1.1.1,,2.2.2.2')).toEqual(['1.1.1.1', '', '2.2.2.2'])
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

  it('skips empty elements', () => {
    expect(parseForwarded(' , for=192.0.2.1 ,, ')).toEqual(['192.0.2.1'])
  })

  it('recovers the elements after a malformed one, so a proxy-appended element survives', () => {
    // The client wrote an unterminated quote; its proxy appended a well-formed element.
    expect(parseForwarded('for="1.2.3.4, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
    expect(parseForwarded('for, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
    expect(parseForwarded('for="a"junk, for=198.51.100.17')).toEqual([undefined, '198.51.100.17'])
  })
})
