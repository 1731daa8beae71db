import { isIP } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatIp, parseIp } from './ip.js'

const text = (input: string) => {
  const ip = parseIp(input)
  return ip === undefined ? undefined : formatIp(ip)
}

describe('parseIp: IPv4', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['  203.0.113.7 ', '203.0.113.7'],
    ['192.0.2.1:8080', '192.0.2.1'],
    ['192.0.2.1:65535', '192.0.2.1'],
    ['2.2.2.2:_x', '2.2.2.2'], // RFC 7239 obfuscated ports
    ['2.2.2.2:_aZ9.-_', '2.2.2.2'],
  ])('%s is %s', (input, expected) => {
    expect(text(input)).toBe(expected)
  })

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4', // leading zero: octal to some parsers, so refused
    '1.2.3.04',
    '1..2.3',
    '1.2.3.',
    '.1.2.3',
    '1.2.3.4:',
    '1.2.3.4:abc',
    '1.2.3.4:123456', // six digits: no port
    '1.2.3.4:_', // an obfuscated port needs a character after "_"
    '1.2.3.4:_a b',
    '1.2.3.4:_a/b',
    '1.2.3.4:x_1',
    'localhost',
    'unknown',
    '1.2.3.4 5',
    '[1.2.3.4]',
  ])('refuses %j', (input) => {
    expect(parseIp(input)).toBeUndefined()
  })
})

describe('parseIp: IPv6', () => {
  it.each([
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // RFC 5952: the first of two equal runs
    ['2001:db8:0:0:0:1:0:0', '2001:db8::1:0:0'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group stays
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['fe80::1%eth0', 'fe80::1'], // zone id dropped
    ['fe80::1%25en0', 'fe80::1'],
    ['[2001:db8::17]', '2001:db8::17'],
    ['[2001:db8::17]:4711', '2001:db8::17'],
    ['[fe80::1%eth0]:443', 'fe80::1'],
    ['[2001:db8::1]:_p1', '2001:db8::1'], // RFC 7239 obfuscated port
    ['::1.2.3.4', '::102:304'], // IPv4-compatible (deprecated): stays IPv6
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ])('%s is %s', (input, expected) => {
    expect(text(input)).toBe(expected)
  })

  it.each([
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:192.0.2.1', '192.0.2.1'],
    ['::ffff:c000:0201', '192.0.2.1'],
    ['0:0:0:0:0:ffff:c000:201', '192.0.2.1'],
    ['[::ffff:192.0.2.1]:80', '192.0.2.1'],
  ])('IPv4-mapped %s is the IPv4 address %s', (input, expected) => {
    const ip = parseIp(input)
    expect(ip?.version).toBe(4)
    expect(ip && formatIp(ip)).toBe(expected)
  })

  it.each([
    ':',
    ':::',
    '1::2::3',
    ':1',
    '1:',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '12345::',
    'g::1',
    '::1.2.3',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::1.2.3.4:5',
    'fe80::1%',
    '[::1',
    '[::1]x',
    '[::1]:',
    '[::1]:_',
    '[::1]:_p!',
    '[::1]:123456',
    `${'1:'.repeat(60)}1`,
  ])('refuses %j', (input) => {
    expect(parseIp(input)).toBeUndefined()
  })
})

describe('parseIp: the digits of a group', () => {
  it('reads 0-9, a-f and A-F, and no other UTF-16 code unit', () => {
    const wrong: string[] = []
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c)
      const hex = /^[0-9a-f]$/i.test(ch) ? Number.parseInt(ch, 16) : undefined
      // Between `1::` and a final `1`: a digit makes the last group, `%` starts a zone id, and
      // anything else is no address.
      const expected =
        hex !== undefined
          ? { version: 6, groups: [1, 0, 0, 0, 0, 0, 0, hex * 16 + 1], zone: undefined }
          : ch === '%'
            ? { version: 6, groups: [1, 0, 0, 0, 0, 0, 0, 0], zone: '1' }
            : undefined
      if (JSON.stringify(parseIp(`1::${ch}1`)) !== JSON.stringify(expected)) wrong.push(ch)
    }
    expect(wrong).toEqual([])
  })
})

describe('parseIp agrees with node:net on what is an address', () => {
  const v4 = fc
    .tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
    .map((parts) => parts.join('.'))
  const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).chain((groups) =>
    fc.nat(8).map((cut) => {
      const hex = groups.map((g) => g.toString(16))
      if (cut >= 7) return hex.join(':')
      // Collapse a random run into '::' the way a sender might.
      return `${hex.slice(0, cut).join(':')}::${hex.slice(cut + 2).join(':')}`
    }),
  )
  const noise = fc.string({
    maxLength: 12,
    unit: fc.constantFrom(...'0123456789abcdef:.'.split('')),
  })

  it('accepts exactly what node:net accepts, and formats to a fixed point', () => {
    fc.assert(
      fc.property(fc.oneof(v4, v6, noise), (input) => {
        // One colon is our `address:port` form, which node:net does not take.
        fc.pre(input.split(':').length !== 2)
        const ip = parseIp(input)
        expect(ip !== undefined).toBe(isIP(input) !== 0)
        if (ip !== undefined) expect(text(formatIp(ip))).toBe(formatIp(ip))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('parseIp: every way of writing one address', () => {
  const groups = fc.array(fc.oneof(fc.constant(0), fc.nat(0xffff)), { minLength: 8, maxLength: 8 })
  /** A text form of `g`: any case, optional leading zeros, any run of zero groups as `::`. */
  const written = (g: readonly number[]) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.array(fc.nat(3), { minLength: 8, maxLength: 8 }),
        fc.nat(8),
        fc.nat(8),
      )
      .map(([upper, pad, from, length]) => {
        const hex = g.map((n, i) => {
          const text = n.toString(16).padStart(Math.min(4, n.toString(16).length + pad[i]!), '0')
          return upper[i] ? text.toUpperCase() : text
        })
        let end = from
        while (end < 8 && end - from < length && g[end] === 0) end++
        if (end - from < 1) return hex.join(':')
        return `${hex.slice(0, from).join(':')}::${hex.slice(end).join(':')}`
      })
  /** With a zone id, in brackets, with a port or an obfuscated one. */
  const decorated = (text: string) =>
    fc.constantFrom(
      text,
      `${text}%eth0`,
      `[${text}]`,
      `[${text}]:443`,
      `[${text}]:_p1`,
      `[${text}%25en0]:1`,
    )

  it('reads each to the same groups, and formats them to one canonical text that reads back', () => {
    fc.assert(
      fc.property(
        groups.chain((g) => fc.tuple(fc.constant(g), written(g).chain(decorated))),
        ([g, input]) => {
          const ip = parseIp(input)
          expect(ip).toBeDefined()
          const mapped = g[5] === 0xffff && g.slice(0, 5).every((n) => n === 0)
          if (mapped) expect(ip).toEqual({ version: 4, value: g[6]! * 65536 + g[7]! })
          else expect(ip?.version === 6 && ip.groups).toEqual(g)
          const canonical = formatIp(ip!)
          expect(canonical).toBe(canonical.toLowerCase())
          expect(canonical).not.toMatch(/(^|:)0[0-9a-f]|:::/)
          expect(parseIp(canonical)).toEqual(ip?.version === 6 ? { ...ip, zone: undefined } : ip)
          expect(isIP(canonical)).not.toBe(0)
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('reads an IPv4 tail as the last two groups, mapped or not', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)),
        fc.constantFrom('::ffff:', '0:0:0:0:0:ffff:', '::', '64:ff9b::', '1:2:3:4:5:6:'),
        (quad, prefix) => {
          const value = ((quad[0] * 256 + quad[1]) * 256 + quad[2]) * 256 + quad[3]
          const ip = parseIp(`${prefix}${quad.join('.')}`)
          if (prefix.includes('ffff')) expect(ip).toEqual({ version: 4, value })
          else
            expect(ip?.version === 6 && ip.groups.slice(6)).toEqual([value >>> 16, value & 0xffff])
          expect(parseIp(`${prefix}${quad.join('.')}.1`)).toBeUndefined()
          expect(parseIp(`1:2:3:4:5:6:7:${quad.join('.')}`)).toBeUndefined()
        },
      ),
      { numRuns: 1000 },
    )
  })
})
