// The masking is done while the address is written (`formatIp(ip, bits)`), no longer on a
// masked copy of it: these properties hold the new path to the old one, kept here as a copy, over
// generated IPv4, IPv6, IPv4-mapped, zoned, bracketed and ported addresses and every prefix.
// Keys name stored state, so they must be the same text for every form of an address.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileClientIp } from './client-ip.js'
import { formatIp, type IpAddress, parseIp } from './ip.js'
import { ipKey } from './ip-prefix.js'
import { trustedProxies } from './proxy-trust.js'

// The old implementation, as it was before the change.
function oldFormatIp(ip: IpAddress): string {
  if (ip.version === 4) {
    const v = ip.value
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`
  }
  const groups = ip.groups
  let best = -1
  let length = 1
  for (let i = 0, run = 0; i < 8; i++) {
    run = groups[i] === 0 ? run + 1 : 0
    if (run > length) {
      length = run
      best = i + 1 - run
    }
  }
  let text = ''
  for (let i = 0; i < 8; i++) {
    if (i === best) {
      text += '::'
      i += length - 1
    } else {
      text += (i === 0 || i === best + length ? '' : ':') + groups[i]!.toString(16)
    }
  }
  return text
}
function oldMaskV4(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
}
function oldGroupMask(prefix: number, index: number): number {
  const bits = prefix - 16 * index
  if (bits >= 16) return 0xffff
  return bits <= 0 ? 0 : (0xffff << (16 - bits)) & 0xffff
}
function oldMaskIp(ip: IpAddress, prefix: number): IpAddress {
  if (ip.version === 4) return { version: 4, value: (ip.value & oldMaskV4(prefix)) >>> 0 }
  const masked = new Array<number>(8)
  for (let i = 0; i < 8; i++) masked[i] = ip.groups[i]! & oldGroupMask(prefix, i)
  return { version: 6, groups: masked, zone: undefined }
}
function oldIpKey(ip: IpAddress, options: { ipv4Prefix?: number; ipv6Prefix?: number }): string {
  const prefix = ip.version === 4 ? (options.ipv4Prefix ?? 32) : (options.ipv6Prefix ?? 64)
  if (prefix === (ip.version === 4 ? 32 : 128)) return oldFormatIp(ip)
  return `${oldFormatIp(oldMaskIp(ip, prefix))}/${prefix}`
}

const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
const v4Text = octets.map((o) => o.join('.'))
// Groups with runs of zeros, so that `::` lands anywhere (and masking makes new runs).
const groups = fc.array(fc.oneof(fc.constant(0), fc.nat(0xffff), fc.nat(15)), {
  minLength: 8,
  maxLength: 8,
})
const v6Text = fc.tuple(groups, fc.boolean(), fc.boolean()).map(([g, upper, short]) => {
  const text = short
    ? oldFormatIp({ version: 6, groups: g, zone: undefined })
    : g.map((x) => x.toString(16)).join(':')
  return upper ? text.toUpperCase() : text
})
const address = fc
  .tuple(
    fc.oneof(
      v4Text,
      v6Text,
      v4Text.map((t) => `::ffff:${t}`),
      v4Text.map((t) => `0:0:0:0:0:FFFF:${t}`),
      fc.tuple(groups, v4Text).map(
        ([g, t]) =>
          `${g
            .slice(0, 6)
            .map((x) => x.toString(16))
            .join(':')}:${t}`,
      ),
    ),
    fc.constantFrom('', '%eth0', '%25'),
    fc.constantFrom('none', 'bracket', 'port', 'obfuscated'),
  )
  .map(([text, zone, wrap]) => {
    const v6 = text.includes(':')
    const base = v6 ? text + zone : text
    if (wrap === 'none') return base
    if (v6) return wrap === 'bracket' ? `[${base}]` : `[${base}]:${wrap === 'port' ? '443' : '_p1'}`
    return wrap === 'bracket' ? base : `${base}:${wrap === 'port' ? '8080' : '_x'}`
  })

describe('keys written while masking, as on a masked copy', () => {
  it('formatIp and ipKey give the old text for every address form and prefix', () => {
    fc.assert(
      fc.property(address, fc.nat(32), fc.nat(128), (text, v4, v6) => {
        const ip = parseIp(text)
        if (ip === undefined) return
        expect(formatIp(ip)).toBe(oldFormatIp(ip))
        const options = { ipv4Prefix: v4, ipv6Prefix: v6 }
        expect(ipKey(ip, options)).toBe(oldIpKey(ip, options))
        expect(ipKey(ip)).toBe(oldIpKey(ip, {}))
        expect(formatIp(ip, ip.version === 4 ? v4 : v6)).toBe(
          oldFormatIp(oldMaskIp(ip, ip.version === 4 ? v4 : v6)),
        )
      }),
      { numRuns: 5000 },
    )
  })

  it("a middleware's client key (fast path or not) is the old key of the parsed address", () => {
    fc.assert(
      fc.property(address, fc.nat(32), fc.nat(128), (text, v4, v6) => {
        const options = { ipv4Prefix: v4, ipv6Prefix: v6, logger: false as const }
        const clientIp = compileClientIp(options, trustedProxies)
        const ip = parseIp(text)
        const read = () => undefined
        expect(clientIp.key(text, undefined, read)).toBe(ip && oldIpKey(ip, options))
        expect(clientIp.address(text, read)).toEqual(
          ip && { ip: oldFormatIp(ip), key: oldIpKey(ip, options), hops: 0 },
        )
        const full = compileClientIp({ logger: false }, trustedProxies)
        expect(full.key(text, undefined, read)).toBe(ip && oldIpKey(ip, {}))
        expect(full.address(text, read)).toEqual(
          ip && { ip: oldFormatIp(ip), key: oldIpKey(ip, {}), hops: 0 },
        )
      }),
      { numRuns: 3000 },
    )
  })
})
