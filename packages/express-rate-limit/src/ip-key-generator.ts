import { isIPv6 } from 'node:net'
import { ipKey, parseIp } from '@tollgate/core/adapter'

/**
 * The key of a client address: an IPv4 address as it is; an IPv6 address as its network of
 * `ipv6Subnet` bits (`2001:db8:1234:5600::/56`), since one host owns a whole block and can rotate
 * through it; an IPv4 address carried in IPv6 (`::ffff:1.2.3.4`, `::1.2.3.4`) as the IPv4
 * address. A custom `keyGenerator` that falls back to the IP should return
 * `ipKeyGenerator(req.ip)`.
 * @param ipv6Subnet the bits that name one client's network; `false` keys on the full address.
 * @example keyGenerator: (req) => req.get('x-api-key') ?? ipKeyGenerator(req.ip!)
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  if (!isIPv6(ip)) return ip
  const address = parseIp(ip)
  if (address === undefined) return ip
  // Parsed, a mapped address (::ffff:0:0/96) is the IPv4 address it carries. The older
  // IPv4-compatible form (::/96) is read as one only when written with a dotted quad: `::1`
  // shares its range and is no IPv4 address.
  if (address.version === 4) return ipKey(address)
  const groups = address.groups
  if (ip.includes('.') && groups.slice(0, 6).every((group) => group === 0)) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`
  }
  if (ipv6Subnet === false || ipv6Subnet === 0) return ip
  const key = ipKey(address, { ipv6Prefix: ipv6Subnet })
  return ipv6Subnet === 128 ? `${key}/128` : key
}
