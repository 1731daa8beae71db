import { RateLimitError } from '../errors.js'
import { type HeaderAccessor, headerText } from '../headers/types.js'
import { createWarnOnce } from '../warnings.js'
import { type ClientAddress, type ClientIpOptions, compileClientIp } from './client-ip.js'
import { type ProxyTrust, trustedProxies } from './proxy-trust.js'

/** The client-IP options plus where API keys come from. */
export type IdentityOptions = ClientIpOptions & {
  /**
   * The request header that carries an API key, or `false` to never read one. Change it to
   * match your API (`x-goog-api-key`, `api-key`…). @default 'x-api-key'
   */
  readonly apiKeyHeader?: string | false | undefined
  /**
   * Also take the API key from `Authorization: Bearer <token>` when the API-key header is
   * absent. Off by default: bearer tokens are often short-lived (a new bucket on each refresh)
   * and, before authentication has run, any client can invent one. Turn it on when your bearer
   * tokens are long-lived API keys. @default false
   */
  readonly bearerAsApiKey?: boolean | undefined
  /**
   * Longer API keys are treated as absent, so a client cannot make the limiter store huge keys.
   * @default 256
   */
  readonly maxApiKeyLength?: number | undefined
}

/** What an adapter knows about a request before the limiter runs. */
export type IdentitySource = {
  /** The socket peer's address (`req.socket.remoteAddress`, Hono `getConnInfo(c).remote.address`). */
  readonly socketAddress: string | undefined
  readonly header: HeaderAccessor
  /** The authenticated user's id, as the framework stores it; absent before authentication. */
  readonly user?: string | number | null | undefined
  /**
   * True when the header list may have been cut (Node's `maxHeadersCount`, see
   * `headerListMayBeCut`): forwarding headers are then not trusted, as if absent, since the
   * line a trusted proxy added may be the one dropped. Warns `WARN_HEADERS_TRUNCATED` once.
   */
  readonly headersCut?: boolean | undefined
}

/** The identities Tollgate derives; rules key on them by name. */
export type Identities = {
  /** The client's IP key (IPv6 by network), resolved through trusted proxies only. */
  readonly ip: string | undefined
  readonly api_key: string | undefined
  readonly user: string | undefined
}

/** The compiled resolver: one call per request. */
export type IdentityResolver = {
  /** The `RequestFacts.identities` of a request. */
  readonly identities: (source: IdentitySource) => Identities
  /** The client address alone, for logs or for rules of your own. */
  readonly clientIp: (
    socketAddress: string | undefined,
    header: HeaderAccessor,
  ) => ClientAddress | undefined
}

/**
 * Compiles the key options once. Composite keys (per account and per IP) are built by the
 * limiter from these identities; a missing identity stays `undefined` so the limiter's
 * `onMissingIdentity` policy can fall back to the IP or refuse.
 * @example
 * const resolver = createIdentityResolver({ trustProxy: 'loopback', apiKeyHeader: 'x-api-key' })
 * const identities = resolver.identities({
 *   socketAddress: req.socket.remoteAddress,
 *   header: (name) => req.headers[name],
 *   user: req.user?.id,
 * }) // { ip: '203.0.113.7', api_key: 'k_123', user: undefined }
 */
export function createIdentityResolver(options: IdentityOptions = {}): IdentityResolver {
  const { identities, clientIp } = compileIdentities(options, trustedProxies)
  return { identities, clientIp }
}

/**
 * `createIdentityResolver`, plus `withoutApiKey`: the same identities with no API key looked
 * up, for rules that never key on one (reading a header is a real cost on fetch runtimes).
 * `builtInProxies` reads forwarding headers when the options give no `proxies` (see
 * `compileClientIp`).
 */
export function compileIdentities(
  options: IdentityOptions,
  builtInProxies: ProxyTrust,
): IdentityResolver & {
  readonly withoutApiKey: IdentityResolver['identities']
} {
  const clientIp = compileClientIp(options, builtInProxies)
  const apiKeyHeader = options.apiKeyHeader === undefined ? 'x-api-key' : options.apiKeyHeader
  if (apiKeyHeader !== false && !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(apiKeyHeader)) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `apiKeyHeader: ${JSON.stringify(apiKeyHeader)} is not a header name`,
      { field: 'apiKeyHeader' },
    )
  }
  const headerName = apiKeyHeader === false ? false : apiKeyHeader.toLowerCase()
  const bearer = options.bearerAsApiKey ?? false
  const maxLength = options.maxApiKeyLength ?? 256
  if (!Number.isSafeInteger(maxLength) || maxLength < 1) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `maxApiKeyLength: expected a whole number ≥ 1, got ${String(maxLength)}`,
      { field: 'maxApiKeyLength' },
    )
  }

  function apiKey(header: HeaderAccessor): string | undefined {
    let key = headerName === false ? undefined : headerText(header(headerName))?.trim()
    if ((key === undefined || key === '') && bearer) key = bearerToken(header)
    return key === undefined || key === '' || key.length > maxLength ? undefined : key
  }

  const warn = createWarnOnce(options)

  /** The client's key, from headers that can be trusted to be all there. */
  function ipKeyOf(source: IdentitySource): string | undefined {
    if (source.headersCut !== true) return clientIp.key(source.socketAddress, source.header)
    warn(
      'WARN_HEADERS_TRUNCATED',
      "a request's header list reached the server's maxHeadersCount, so Node may have dropped lines (a trusted proxy's X-Forwarded-For among them): such requests are keyed as if they carried no forwarding header; raise maxHeadersCount if real clients send that many",
    )
    return clientIp.key(source.socketAddress, withoutForwardingHeaders(source.header))
  }

  return {
    clientIp: clientIp.address,
    identities(source) {
      return {
        ip: ipKeyOf(source),
        api_key: apiKey(source.header),
        user: userId(source.user),
      }
    },
    withoutApiKey(source) {
      return {
        ip: ipKeyOf(source),
        api_key: undefined,
        user: userId(source.user),
      }
    },
  }
}

/** The headers, with the forwarding headers read as absent. */
function withoutForwardingHeaders(header: HeaderAccessor): HeaderAccessor {
  return (name) => (name === 'x-forwarded-for' || name === 'forwarded' ? undefined : header(name))
}

function userId(user: IdentitySource['user']): string | undefined {
  return user === undefined || user === null || user === '' ? undefined : String(user)
}

/** The token of `Authorization: Bearer <token>` (scheme matched without regard to case). */
function bearerToken(header: HeaderAccessor): string | undefined {
  const value = headerText(header('authorization'))?.trim()
  if (value === undefined || value.length < 8) return undefined
  if (value.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  const c = value.charCodeAt(6)
  if (c !== 32 && c !== 9) return undefined
  return value.slice(7).trim()
}
