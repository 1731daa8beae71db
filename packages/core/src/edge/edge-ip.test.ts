import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseIp } from '../identity/ip.js'
import { ipKey } from '../identity/ip-prefix.js'
import { edgeIpKey, edgeParseIp } from './edge-ip.js'

const PIECES = [
  '0',
  '1',
  '01',
  '00',
  '10',
  '127',
  '192',
  '255',
  '256',
  '999',
  'a',
  'ab',
  'ffff',
  'FFFF',
  '12345',
  'db8',
  '2001',
  'g',
  ':',
  '::',
  ':::',
  '.',
  '..',
  '%',
  '%eth0',
  '[',
  ']',
  ':80',
  ':_p1',
  ':_',
  ':123456',
  ' ',
  'x',
  '-',
  '_',
  '0.0.0.0',
  '192.0.2.1',
  '1.2.3',
  '::ffff:',
  '1.2.3.04',
]

describe('edgeParseIp', () => {
  it('reads every text as parseIp does', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }), (pieces) => {
        const text = pieces.join('')
        expect(edgeParseIp(text), JSON.stringify(text)).toEqual(parseIp(text))
      }),
      { numRuns: 20_000 },
    )
  })

  it('reads the addresses runtimes report as parseIp does', () => {
    for (const text of [
      '192.0.2.1',
      '::1',
      '2001:db8::1',
      '2001:DB8:0:0:0:0:0:1',
      '::ffff:192.0.2.1',
      'fe80::1%eth0',
      '[2001:db8::1]:443',
      '192.0.2.1:8080',
      '1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:1.2.3.4',
      '::',
      '1::',
      '::1.2.3.4',
      '1.2.3.4::',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7:8:9',
      ' 10.0.0.1 ',
      '[::1]',
      '[::1',
      '[::1]x',
      'unknown',
      '',
      '::ffff:1.2.3.4%z',
      '0:0:0:0:0:ffff:102:304',
    ]) {
      expect(edgeParseIp(text), text).toEqual(parseIp(text))
    }
  })

  it('keys an address by its network as ipKey does', () => {
    const address = fc.oneof(
      fc.ipV4().map((text) => parseIp(text)!),
      fc.ipV6().map((text) => parseIp(text)!),
    )
    fc.assert(
      fc.property(address, fc.integer({ min: 0, max: 128 }), (ip, bits) => {
        const prefix = ip.version === 4 ? bits % 33 : bits
        const options = ip.version === 4 ? { ipv4Prefix: prefix } : { ipv6Prefix: prefix }
        expect(edgeIpKey(ip, prefix)).toBe(ipKey(ip, options))
      }),
      { numRuns: 20_000 },
    )
  })
})
