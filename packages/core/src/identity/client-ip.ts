import { type HeaderAccessor, headerText } from '../headers/types.js'
import { createWarnOnce, type WarningOptions } from '../warnings.js'
import { parseForwarded, parseXForwardedFor } from './forwarded.js'
import { formatIp, type IpAddress, isDottedQuad, parseIp } from './ip.js'
import { checkPrefix, createIpMatcher, ipKey, type PrefixOptions } from './ip-prefix.js'

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
  return compileClientIp(options).address
}

/** The client's rate-limit key alone: `resolveClientIp(…)?.key`, for the request path. */
export type ClientKeyResolver = (
  socketAddress: string | undefined,
  header: HeaderAccessor,
) => string | undefined

/** The per-request resolvers of one trust configuration: the full address, or the key alone. */
export function compileClientIp(options: ClientIpOptions = {}): {
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
  const trust = compileTrust(options.trustProxy ?? false, warn)
  const headerName = options.proxyHeader ?? 'x-forwarded-for'
  const readChain =
    headerName === 'forwarded'
      ? (text: string) => parseForwarded(text)
      : (text: string) => parseXForwardedFor(text)
  let headersChecked = false

  const v4Full = (options.ipv4Prefix ?? 32) === 32
  const v6Full = (options.ipv6Prefix ?? 64) === 128
  const result = (ip: IpAddress, hops: number): ClientAddress => {
    const text = formatIp(ip)
    const full = ip.version === 4 ? v4Full : v6Full
    return { ip: text, key: full ? text : ipKey(ip, prefixes), hops }
  }

  function checkForwardingHeaders(header: HeaderAccessor): void {
    if (!headersChecked && (header('x-forwarded-for') ?? header('forwarded')) !== undefined) {
      headersChecked = true
      warn(
        'WARN_FORWARDED_HEADERS_IGNORED',
        "a request carried X-Forwarded-For or Forwarded while trustProxy trusts no proxy: behind a proxy every client shares the proxy's key; set trustProxy to your proxies' addresses (or ignore this if the app faces clients directly)",
      )
    }
  }

  function address(socketAddress: string | undefined, header: HeaderAccessor) {
    const socket = socketAddress === undefined ? undefined : parseIp(socketAddress)
    if (socket === undefined) {
      warn(
        'WARN_CLIENT_ADDRESS_UNKNOWN',
        `the socket address ${JSON.stringify(socketAddress)} is not an IP address, so requests have no "ip" identity; pass the connection's remote address (Hono: getConnInfo)`,
      )
      return undefined
    }
    if (trust === undefined) {
      checkForwardingHeaders(header)
      return result(socket, 0)
    }
    if (!trust.isTrusted(socket, 0)) return result(socket, 0)
    const text = headerText(header(headerName))
    const chain = text === undefined ? [] : readChain(text)
    let client = socket
    let hops = 0
    for (let i = chain.length - 1; i >= 0; i--) {
      const entry = chain[i]
      const next = entry === undefined ? undefined : parseIp(entry)
      // A trusted proxy wrote this entry; if it is not an address, the proxy did not know the
      // client, and the proxy itself is the best key we have (never a client-chosen one).
      if (next === undefined) return result(client, hops)
      client = next
      hops++
      if (!trust.isTrusted(next, hops)) return result(client, hops)
    }
    if (trust.hopCount !== undefined && hops < trust.hopCount) {
      warn(
        'WARN_HOP_COUNT_EXCEEDS_CHAIN',
        `trustProxy is ${trust.hopCount} but a request came through ${hops} forwarding hop(s): its left-most address may be forged; check the hop count, or list your proxies' addresses instead`,
      )
    }
    return result(client, hops)
  }

  function key(socketAddress: string | undefined, header: HeaderAccessor) {
    // The socket peer is the client and its address is already canonical text (a plain dotted
    // quad, or one mapped into IPv6 the way dual-stack sockets report it): that text is the key,
    // with nothing to parse into objects or format back.
    if (trust === undefined && v4Full && socketAddress !== undefined) {
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

type CompiledTrust = {
  /** `hop` 0 is the socket peer, 1 the right-most forwarded entry, and so on. */
  readonly isTrusted: (ip: IpAddress, hop: number) => boolean
  readonly hopCount: number | undefined
}

function compileTrust(
  trustProxy: TrustProxy,
  warn: ReturnType<typeof createWarnOnce>,
): CompiledTrust | undefined {
  if (trustProxy === false || trustProxy === 0) return undefined
  if (trustProxy === true) {
    warnTrustAll(warn, 'trustProxy is true')
    return { isTrusted: () => true, hopCount: undefined }
  }
  if (typeof trustProxy === 'number') {
    checkPrefix('trustProxy', trustProxy, Number.MAX_SAFE_INTEGER)
    return { isTrusted: (_ip, hop) => hop < trustProxy, hopCount: trustProxy }
  }
  // An empty list or string (say, from an unset environment variable) trusts no proxy either:
  // forwarding headers are then ignored, and warned about, as with `false`.
  if (isEmptyList(trustProxy)) return undefined
  const matcher = createIpMatcher(trustProxy)
  if (matcher.coversEverything) {
    const families = matcher.coveredFamilies.join(' and ')
    warnTrustAll(warn, `trustProxy covers every ${families} address`, `every ${families} hop`)
  }
  return { isTrusted: (ip) => matcher.contains(ip), hopCount: undefined }
}

function isEmptyList(list: string | readonly string[]): boolean {
  return typeof list === 'string' ? list.trim() === '' : list.length === 0
}

function warnTrustAll(
  warn: ReturnType<typeof createWarnOnce>,
  what: string,
  hops = 'every forwarding hop',
): void {
  warn(
    'WARN_TRUST_ALL_PROXIES',
    `${what}: ${hops} is believed, so any client can pick its own key by sending X-Forwarded-For; list your proxies' addresses or give their number instead`,
  )
}
