import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import type { IpAddress } from './ip.js'
import { parseIp } from './ip.js'
import { cidrContains, createIpMatcher, ipKey, parseCidr } from './ip-prefix.js'

const ip = (text: string): IpAddress => {
  const parsed = parseIp(text)
  if (parsed === undefined) throw new Error(`test address ${text} does not parse`)
  return parsed
}

describe('ipKey', () => {
  it('keys IPv4 by the full address', () => {
    expect(ipKey(ip('203.0.113.7'))).toBe('203.0.113.7')
  })

  it('keys IPv4 by a subnet when ipv4Prefix is lower', () => {
    expect(ipKey(ip('203.0.113.7'), { ipv4Prefix: 24 })).toBe('203.0.113.0/24')
    expect(ipKey(ip('203.0.113.7'), { ipv4Prefix: 0 })).toBe('0.0.0.0/0')
  })

  it('keys IPv6 by its /64 by default, so rotating the interface id does not escape', () => {
    const a = ipKey(ip('2001:db8:85a3:8d3:1319:8a2e:370:7348'))
    const b = ipKey(ip('2001:db8:85a3:8d3:ffff:ffff:ffff:1'))
    expect(a).toBe('2001:db8:85a3:8d3::/64')
    expect(b).toBe(a)
    expect(ipKey(ip('2001:db8:85a3:8d4::1'))).not.toBe(a)
  })

  it('honours ipv6Prefix: 56 and 48, and 128 for the bare address', () => {
    const address = ip('2001:db8:abcd:12ff:1::1')
    expect(ipKey(address, { ipv6Prefix: 56 })).toBe('2001:db8:abcd:1200::/56')
    expect(ipKey(address, { ipv6Prefix: 48 })).toBe('2001:db8:abcd::/48')
    expect(ipKey(address, { ipv6Prefix: 128 })).toBe('2001:db8:abcd:12ff:1::1')
  })

  it('keys an IPv4-mapped address like its IPv4 address, whatever the IPv6 prefix', () => {
    expect(ipKey(ip('::ffff:198.51.100.4'), { ipv6Prefix: 64 })).toBe('198.51.100.4')
  })

  it('drops the zone id from the key', () => {
    expect(ipKey(ip('fe80::1%eth0'), { ipv6Prefix: 128 })).toBe('fe80::1')
  })
})

describe('parseCidr and cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['172.16.0.0/12', '172.31.255.255', true],
    ['172.16.0.0/12', '172.32.0.0', false],
    ['192.0.2.1', '192.0.2.1', true],
    ['192.0.2.1', '192.0.2.2', false],
    ['10.1.2.3/8', '10.9.9.9', true], // host bits are cleared
    ['0.0.0.0/0', '198.51.100.1', true],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/32', '2001:db9::1', false],
    ['fe80::/10', 'febf::1', true],
    ['fe80::/10', 'fec0::1', false],
    ['::/0', '2001:db8::1', true],
    ['::ffff:10.0.0.0/104', '10.1.2.3', true], // a mapped range is the IPv4 range
    ['10.0.0.0/8', '::ffff:10.1.2.3', true], // and a mapped address matches IPv4 ranges
    ['10.0.0.0/8', '2001:db8::1', false],
    ['::/0', '10.0.0.1', false], // IPv6 ranges never match IPv4 addresses
  ])('%s contains %s: %s', (range, address, expected) => {
    const cidr = parseCidr(range)
    expect(cidr).toBeDefined()
    expect(cidr && cidrContains(cidr, ip(address))).toBe(expected)
  })

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/1a', 'host/8', ''])(
    'refuses %j',
    (range) => {
      expect(parseCidr(range)).toBeUndefined()
    },
  )
})

describe('createIpMatcher', () => {
  it('takes names, ranges and addresses, as an array or one comma-separated string', () => {
    const fromArray = createIpMatcher(['loopback', '10.0.0.0/8', '2001:db8::1'])
    const fromString = createIpMatcher('loopback, 10.0.0.0/8, 2001:db8::1')
    for (const matcher of [fromArray, fromString]) {
      expect(matcher.contains(ip('127.0.0.1'))).toBe(true)
      expect(matcher.contains(ip('::1'))).toBe(true)
      expect(matcher.contains(ip('10.2.3.4'))).toBe(true)
      expect(matcher.contains(ip('2001:db8::1'))).toBe(true)
      expect(matcher.contains(ip('2001:db8::2'))).toBe(false)
      expect(matcher.contains(ip('203.0.113.1'))).toBe(false)
      expect(matcher.coversEverything).toBe(false)
    }
  })

  it('knows private, uniquelocal and linklocal', () => {
    const matcher = createIpMatcher(['private', 'linklocal'])
    for (const inside of [
      '10.0.0.1',
      '172.20.0.1',
      '192.168.1.1',
      'fd00::1',
      '169.254.1.1',
      'fe80::1',
    ]) {
      expect(matcher.contains(ip(inside))).toBe(true)
    }
    expect(matcher.contains(ip('8.8.8.8'))).toBe(false)
    expect(createIpMatcher('uniquelocal').contains(ip('fc12::1'))).toBe(true)
  })

  it('reports a range that covers a whole address family', () => {
    expect(createIpMatcher(['0.0.0.0/0'])).toMatchObject({
      coversEverything: true,
      coveredFamilies: ['IPv4'],
    })
    expect(createIpMatcher(['::/0']).coveredFamilies).toEqual(['IPv6'])
    expect(createIpMatcher(['::ffff:0:0/96']).coveredFamilies).toEqual(['IPv4']) // mapped: IPv4
  })

  it('reports ranges that together cover a whole family, in any order and overlapping', () => {
    const families = (entries: string[]) => createIpMatcher(entries).coveredFamilies
    expect(families(['0.0.0.0/1', '128.0.0.0/1'])).toEqual(['IPv4'])
    expect(families(['192.0.0.0/2', '10.0.0.0/8', '0.0.0.0/1', '128.0.0.0/2'])).toEqual(['IPv4'])
    expect(families(['::/1', '8000::/2', 'c000::/2', '0.0.0.0/1', '128.0.0.0/1'])).toEqual([
      'IPv4',
      'IPv6',
    ])
  })

  it('does not report ranges that leave a gap, or that cover two families half each', () => {
    const families = (entries: string[]) => createIpMatcher(entries).coveredFamilies
    expect(families(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/4'])).toEqual([])
    expect(families(['128.0.0.0/1', '64.0.0.0/2'])).toEqual([])
    expect(families(['::/1', 'c000::/2'])).toEqual([])
    expect(families(['0.0.0.0/1', '8000::/1'])).toEqual([])
  })

  it('does not report ranges that miss one address, and does once it is added', () => {
    for (const [bits, last] of [
      [32, '255.255.255.255'],
      [128, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    ] as const) {
      const ranges = allButTheLastAddress(bits)
      expect(ranges).toHaveLength(bits)
      expect(createIpMatcher(ranges).coversEverything).toBe(false)
      expect(createIpMatcher([...ranges, last]).coversEverything).toBe(true)
    }
  })

  it('throws ERR_RL_INVALID_OPTION naming the option for an entry it cannot read', () => {
    let caught: unknown
    try {
      createIpMatcher(['10.0.0.0/8', 'proxy.internal'])
    } catch (error) {
      caught = error
    }
    expect(isRateLimitError(caught)).toBe(true)
    expect(caught).toMatchObject({ code: 'ERR_RL_INVALID_OPTION', field: 'trustProxy' })
    expect(String(caught)).toContain('"proxy.internal"')
  })

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'refuses %j, which every object inherits, as an unknown name',
    (name) => {
      let caught: unknown
      try {
        createIpMatcher(name)
      } catch (error) {
        caught = error
      }
      expect(isRateLimitError(caught)).toBe(true)
      expect(caught).toMatchObject({ code: 'ERR_RL_INVALID_OPTION', field: 'trustProxy' })
    },
  )
})

/** `bits` ranges, one of each prefix length, that hold every address of the family but its last. */
function allButTheLastAddress(bits: 32 | 128): string[] {
  const all = 1n << BigInt(bits)
  const ranges: string[] = []
  for (let prefix = 1; prefix <= bits; prefix++) {
    const network = all - (1n << BigInt(bits - prefix + 1))
    ranges.push(`${bits === 32 ? ipv4Text(network) : ipv6Text(network)}/${prefix}`)
  }
  return ranges
}

function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 255n).join('.')
}

function ipv6Text(value: bigint): string {
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n]
  return groups.map((shift) => ((value >> shift) & 0xffffn).toString(16)).join(':')
}
