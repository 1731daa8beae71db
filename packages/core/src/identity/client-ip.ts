import type { HeaderAccessor } from '../headers/types.js'
import type { NodeIncomingHeaders } from '../node/node-header-limit.js'
import { checkOptionValues, type OptionKind, shown, whole } from '../options/option-values.js'
import { createWarnOnce, type WarningOptions } from '../warnings.js'
import { formatIp, type IpAddress, ipv4Number, parseIp } from './ip.js'
import { networkKey, type PrefixOptions } from './ip-prefix.js'
import {
  type ClientAddress,
  type HeaderReader,
  type ProxyTrust,
  type TrustProxy,
  trustedProxies,
} from './proxy-trust.js'

export type { ClientAddress, HeaderReader, TrustProxy } from './proxy-trust.js'

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
  checkOptionValues(options, CLIENT_IP_KINDS)
  return compileClientIp(options, trustedProxies).address
}

/**
 * What the prefix options' values must be (`checkOptionValues`; a middleware checks them with its
 * other options). `trustProxy` is checked as it is parsed (`trustedProxies`).
 */
export const CLIENT_IP_KINDS = {
  ipv4Prefix: whole({ min: 0, max: 32 }),
  ipv6Prefix: whole({ min: 0, max: 128 }),
} satisfies { readonly [K in keyof ClientIpOptions]?: OptionKind }

/**
 * The client's rate-limit key alone, `address(…)?.key`, for the request path; `incoming`: the
 * Node request the source was read from, asked for only while a proxy is trusted: when Node may
 * have cut its header list, trusted proxies' forwarding headers are read as absent.
 */
type ClientKeyResolver = <Source>(
  socketAddress: string | undefined,
  source: Source,
  read: HeaderReader<Source>,
  incoming?: ((source: Source) => Partial<NodeIncomingHeaders> | undefined) | undefined,
) => string | undefined

/** The per-request resolvers of one trust configuration (`compileClientIp`). */
export type ClientIp = {
  readonly address: ClientIpResolver
  readonly key: ClientKeyResolver
}

/**
 * The per-request resolvers of one trust configuration (its prefixes checked: `CLIENT_IP_KINDS`):
 * the full address, or the key alone. A `trustProxy` that trusts some proxy reads the forwarding
 * header with `proxies` (`trustedProxies`, or the refusal of a middleware composed without it).
 */
export function compileClientIp(options: ClientIpOptions, proxies: ProxyTrust): ClientIp {
  const warn = createWarnOnce(options)
  const v4Prefix = options.ipv4Prefix ?? 32
  const v6Prefix = options.ipv6Prefix ?? 64
  if (v6Prefix > 64) {
    warn(
      'WARN_IPV6_UNMASKED',
      `ipv6Prefix ${v6Prefix} is over 64, so one host can rotate through its /64 past its limit`,
    )
  }

  // The key is the address's text, or its network's below the full prefix (as `ipKey`).
  const result = (ip: IpAddress, hops: number): ClientAddress => {
    const text = formatIp(ip)
    const key = networkKey(ip, ip.version === 4 ? v4Prefix : v6Prefix) ?? text
    return { ip: text, key, hops }
  }
  // `false`, `0`, and an empty list or string (say, from an unset environment variable) trust
  // no proxy: forwarding headers are then ignored, and warned about.
  const trustProxy = options.trustProxy ?? false
  const trustsNone =
    trustProxy === false ||
    trustProxy === 0 ||
    (typeof trustProxy === 'string'
      ? trustProxy.trim() === ''
      : Array.isArray(trustProxy) && trustProxy.length === 0)
  const forwarded = trustsNone
    ? undefined
    : proxies(trustProxy, options.proxyHeader ?? 'x-forwarded-for', warn, result)

  // While it trusts none, the proxies part watches for forwarding headers (a middleware composed
  // without it reads none).
  const untrusted = trustsNone ? proxies.untrusted?.(warn) : undefined
  // The socket peer is the client, keyed by its full IPv4 address: `key`'s fast path.
  const peerText = forwarded === undefined && v4Prefix === 32

  function address(
    socketAddress: string | undefined,
    header: HeaderAccessor,
    incoming?: Partial<NodeIncomingHeaders> | undefined,
  ) {
    const socket = socketAddress === undefined ? undefined : parseIp(socketAddress)
    if (socket === undefined) {
      warn(
        'WARN_CLIENT_ADDRESS_UNKNOWN',
        `the socket address ${shown(socketAddress)} is not an IP, so requests have no "ip" identity (Hono: pass getConnInfo)`,
      )
      return undefined
    }
    if (forwarded !== undefined) return forwarded(socket, header, incoming)
    untrusted?.(socketAddress!, header)
    return result(socket, 0)
  }

  function key<Source>(
    socketAddress: string | undefined,
    source: Source,
    read: HeaderReader<Source>,
    incoming?: ((source: Source) => Partial<NodeIncomingHeaders> | undefined) | undefined,
  ): string | undefined {
    // The socket peer is the client and its address is already canonical text (a plain dotted
    // quad, or one mapped into IPv6 the way dual-stack sockets report it): that text is the key,
    // with nothing to parse into objects or format back.
    if (peerText && socketAddress !== undefined) {
      const start = socketAddress.startsWith(MAPPED_PREFIX) ? MAPPED_PREFIX.length : 0
      const length = socketAddress.length
      if (length - start <= 15 && ipv4Number(socketAddress, start, length) !== undefined) {
        untrusted?.(socketAddress, source, read)
        return start === 0 ? socketAddress : socketAddress.slice(start)
      }
    }
    const node = forwarded === undefined ? undefined : incoming?.(source)
    return address(socketAddress, (name) => read(source, name), node)?.key
  }

  return { address, key }
}

/** How a dual-stack socket reports an IPv4 peer: `::ffff:203.0.113.7`. */
const MAPPED_PREFIX = '::ffff:'
