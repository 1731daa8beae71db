/**
 * The HTTP layer of Tollgate, framework-agnostic and free of Node built-ins: who the client is
 * (IP behind trusted proxies, IPv6 by network, API key, user) and what to answer (rate-limit
 * headers, `Retry-After`, RFC 9457 problem bodies). Adapters translate their framework's
 * request into the inputs and copy the outputs onto their response.
 *
 * @example
 * import { createIdentityResolver, createResponder } from '@tollgate/core'
 *
 * // Once, at start-up: options are parsed and checked here, not per request.
 * const keys = createIdentityResolver({ trustProxy: ['10.0.0.0/8'], apiKeyHeader: 'x-api-key' })
 * const responder = createResponder({ exposeHeaders: true })
 *
 * // Per request:
 * const identities = keys.identities({
 *   socketAddress: req.socket.remoteAddress,
 *   header: (name) => req.headers[name],
 *   user: req.user?.id,
 * })
 * const verdict = await limiter.decide({ method: req.method, path: req.path, identities })
 * const { allowed, status, headers, body } = responder.respond(verdict, Date.now())
 * for (const [name, value] of headers) res.append(name, value)
 * if (allowed) return next()
 * res.status(status).send(body)
 */
export {
  type ClientAddress,
  type ClientIpOptions,
  type ClientIpResolver,
  createClientIpResolver,
  type TrustProxy,
} from './client-ip.js'
export { type FieldWrite, isSingleValuedName, mergeFields } from './field-merge.js'
export { parseForwarded, parseXForwardedFor } from './forwarded.js'
export {
  createIdentityResolver,
  type Identities,
  type IdentityOptions,
  type IdentityResolver,
  type IdentitySource,
} from './identities.js'
export { formatIp, type IpAddress, parseIp } from './ip.js'
export {
  type Cidr,
  cidrContains,
  createIpMatcher,
  ipKey,
  maskIp,
  NAMED_RANGES,
  type PrefixOptions,
  parseCidr,
} from './ip-prefix.js'
export {
  type CoreOptions,
  checkHooks,
  createTollgate,
  type Handled,
  isHandled,
  isPromise,
  REQUEST_HOOKS,
  type RefundWhen,
  type RequestHooks,
  type RequestReaders,
  refundPredicate,
  refundQuietly,
  requestReaders,
  type Tollgate,
  type UserId,
  userIdOf,
} from './middleware.js'
export {
  headerListMayBeCut,
  NODE_DEFAULT_MAX_HEADERS_COUNT,
  type NodeIncomingHeaders,
} from './node-header-limit.js'
export {
  type NodeResponse,
  NodeResponseFieldWriter,
  setNodeResponseFields,
} from './node-response-fields.js'
export {
  createPartitionKeyHasher,
  PARTITION_KEY_BYTES,
  PARTITION_KEY_CACHE_SIZE,
  type PartitionKeyHasher,
} from './partition-key.js'
export { policyName, quotaPerSeconds } from './policy-fields.js'
export {
  fieldsForOwnAnswer,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  QUOTA_EXCEEDED_TYPE,
  TEMPORARY_REDUCED_CAPACITY_TYPE,
} from './problem.js'
export { type LegacyReset, retryAfterSeconds, type StandardHeaders } from './rate-limit-headers.js'
export {
  createResponder,
  type LimitResponse,
  type MissingIdentityResponse,
  type Responder,
  type ResponderOptions,
} from './responder.js'
export { ReusedIdentitySource } from './reused-identity-source.js'
export { guardShadowDeniedHook } from './shadow-hook.js'
export {
  type SfBareItem,
  type SfItem,
  type SfParameters,
  serializeBareItem,
  serializeDictionary,
  serializeItem,
  serializeList,
  serializeString,
} from './structured-fields.js'
export type { FieldWriter, HeaderAccessor, HeaderEntries } from './types.js'
export type { WarningCode, WarningOptions } from './warnings.js'
