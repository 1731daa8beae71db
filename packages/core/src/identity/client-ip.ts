import { RateLimitError } from '../errors.js'
import type { HeaderAccessor } from '../headers/types.js'
import { createWarnOnce, type WarningOptions } from '../warnings.js'
import { forwardingHeaderCheck } from './forwarding-header-check.js'
import { formatIp, type IpAddress, isDottedQuad, parseIp } from './ip.js'
import { checkPrefix, ipKey, type PrefixOptions } from './ip-prefix.js'
import { type ProxyTrust, trustedProxies } from './proxy-trust.js'

/**
 * Which proxies may tell us who the client is.
 * - `false` (or `0`, an empty list, an empty string): none; the socket peer is the client and
 *   forwarding headers are ignored.
 * - a list of addresses, CIDR ranges and range names (`'loopback'`, `'linklocal'`,
 *   `'private'`), as an array or one comma-separated string: the header is walked from the
 *   right and the first address outside the list is the client. A list whose ranges cover every
 *   IPv4 or every IPv6 address warns `WARN_TRUST_ALL_PROXIES`.
 * - a number `n`: exactly `n` proxies stand in front of the app (the socket peer is the first),
 *   so the client is the address `n` hops to the left of the socket.
 * - `true`: every hop is trusted, so the left-most address (which the client itself can write)
 *   is used. Warns `WARN_TRUST_ALL_PROXIES`.
 */
export type TrustProxy = boolean | number | string | readonly string[]

/** Who may tell us the client's address, and how addresses become keys. */
export type ClientIpOptions = PrefixOptions &
  WarningOptions & {
    /** @default false */
    readonly trustProxy?: TrustProxy | undefined
    /**
     * The forwarding header your trusted proxies write; the other one is never read, so a
     * client cannot slip one past a proxy that only appends to the other.
     * @default 'x-forwarded-for'
     */
    readonly proxyHeader?: 'x-forwarded-for' | 'forwarded' | undefined
    /**
     * How a `trustProxy` that trusts some proxy reads the forwarding header: `trustedProxies`.
     * Built into the default entries; the lean entries (`@tollgate/hono/lean`) take it from the
     * app, so that an app facing clients directly bundles no forwarding-header parser.
     * @default trustedProxies (default entries), none (lean entries)
     */
    readonly proxies?: ProxyTrust | undefined
  }

/** Who sent a request, as far as the trusted proxies can tell. */
export type ClientAddress = {
  /** The client's address in canonical text, e.g. `203.0.113.7` or `2001:db8::1`. */
  readonly ip: string
  /** The rate-limit key: the full IPv4 address or the IPv6 network, e.g. `2001:db8::/64`. */
  readonly key: string
  /** How many trusted proxies the request came through; 0 when the socket peer is the client. */
  readonly hops: number
}

/**
 * Resolves a request's client from the socket peer's address and the headers. Returns
 * `undefined` when the socket address is missing or not an IP (a Unix socket, a runtime that
 * does not expose it): the request then has no `ip` identity, and the limiter's
 * missing-identity policy applies.
 */
export type ClientIpResolver = (
  socketAddress: string | undefined,
  header: HeaderAccessor,
) => ClientAddress | undefined

/**
 * Compiles the trust configuration once and returns the per-request resolver.
 * @example
 * const clientIp = createClientIpResolver({ trustProxy: ['10.0.0.0/8', 'loopback'] })
 * clientIp(req.socket.remoteAddress, (name) => req.headers[name])?.key // '203.0.113.7'
 */
export function createClientIpResolver(options: ClientIpOptions = {}): ClientIpResolver {
  return compileClientIp(options, trustedProxies).address
}

/** The client's rate-limit key alone: `resolveClientIp(…)?.key`, for the request path. */
export type ClientKeyResolver = (
  socketAddress: string | undefined,
  header: HeaderAccessor,
) => string | undefined

/**
 * The per-request resolvers of one trust configuration: the full address, or the key alone. A
 * `trustProxy` that trusts some proxy is compiled by the `proxies` option, else by
 * `builtInProxies` (`trustedProxies` in the default entries; in the lean ones `NO_PROXIES`,
 * which refuses it, naming the option).
 */
export function compileClientIp(
  options: ClientIpOptions = {},
  builtInProxies: ProxyTrust,
): {
  readonly address: ClientIpResolver
  readonly key: ClientKeyResolver
} {
  checkPrefix('ipv4Prefix', options.ipv4Prefix, 32)
  checkPrefix('ipv6Prefix', options.ipv6Prefix, 128)
  const warn = createWarnOnce(options)
  const prefixes = { ipv4Prefix: options.ipv4Prefix, ipv6Prefix: options.ipv6Prefix }
  if ((options.ipv6Prefix ?? 64) > 64) {
    warn(
      'WARN_IPV6_UNMASKED',
      `ipv6Prefix ${options.ipv6Prefix} is longer than 64: a host that owns a /64 can rotate addresses to escape its limit`,
    )
  }

  const v4Full = (options.ipv4Prefix ?? 32) === 32
  const v6Full = (options.ipv6Prefix ?? 64) === 128
  const result = (ip: IpAddress, hops: number): ClientAddress => {
    const text = formatIp(ip)
    const full = ip.version === 4 ? v4Full : v6Full
    return { ip: text, key: full ? text : ipKey(ip, prefixes), hops }
  }
  const proxies = options.proxies ?? builtInProxies
  if (typeof proxies !== 'function' && proxies !== undefined) {
    throw new RateLimitError('ERR_RL_INVALID_RULE', 'proxies: expected trustedProxies', {
      field: 'proxies',
    })
  }
  const trustProxy = options.trustProxy ?? false
  const forwarded = trustsNoProxy(trustProxy)
    ? undefined
    : proxies(trustProxy, options.proxyHeader ?? 'x-forwarded-for', warn, result)

  const checkForwardingHeaders = forwardingHeaderCheck(() =>
    warn(
      'WARN_FORWARDED_HEADERS_IGNORED',
      "a request carried X-Forwarded-For or Forwarded while trustProxy trusts no proxy: behind a proxy every client shares the proxy's key; set trustProxy to your proxies' addresses (or ignore this if the app faces clients directly)",
    ),
  )

  function address(socketAddress: string | undefined, header: HeaderAccessor) {
    const socket = socketAddress === undefined ? undefined : parseIp(socketAddress)
    if (socket === undefined) {
      warn(
        'WARN_CLIENT_ADDRESS_UNKNOWN',
        `the socket address ${JSON.stringify(socketAddress)} is not an IP address, so requests have no "ip" identity; pass the connection's remote address (Hono: getConnInfo)`,
      )
      return undefined
    }
    if (forwarded !== undefined) return forwarded(socket, header)
    checkForwardingHeaders(header)
    return result(socket, 0)
  }

  function key(socketAddress: string | undefined, header: HeaderAccessor) {
    // The socket peer is the client and its address is already canonical text (a plain dotted
    // quad, or one mapped into IPv6 the way dual-stack sockets report it): that text is the key,
    // with nothing to parse into objects or format back.
    if (forwarded === undefined && v4Full && socketAddress !== undefined) {
      if (isDottedQuad(socketAddress, 0)) {
        checkForwardingHeaders(header)
        return socketAddress
      }
      if (socketAddress.startsWith(MAPPED_PREFIX) && isDottedQuad(socketAddress, 7)) {
        checkForwardingHeaders(header)
        return socketAddress.slice(7)
      }
    }
    return address(socketAddress, header)?.key
  }

  return { address, key }
}

/** How a dual-stack socket reports an IPv4 peer: `::ffff:203.0.113.7`. */
const MAPPED_PREFIX = '::ffff:'

/**
 * True for the settings that trust no proxy: `false`, `0`, and an empty list or string (say,
 * from an unset environment variable): forwarding headers are then ignored, and warned about.
 */
function trustsNoProxy(trustProxy: TrustProxy): boolean {
  if (trustProxy === false || trustProxy === 0) return true
  if (typeof trustProxy === 'string') return trustProxy.trim() === ''
  return Array.isArray(trustProxy) && trustProxy.length === 0
}
