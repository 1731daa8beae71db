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
} from './adapter/middleware.js'
export { guardShadowDeniedHook } from './adapter/shadow-hook.js'
export {
  type Algorithm,
  type AlgorithmName,
  type AlgorithmParams,
  type AlgorithmState,
  checkCost,
  checkTime,
  fixedWindow,
  gcra,
  leakyBucket,
  MAX_SLIDING_LOG_LIMIT,
  MAX_TIME_MS,
  type QuotaPolicy,
  type RateParams,
  type StateSlots,
  type StepResult,
  slidingLog,
  slidingWindow,
  step,
  tokenBucket,
  type WindowParams,
} from './algorithms/index.js'
export { type Clock, systemClock } from './clock.js'
export type { Decision } from './decision.js'
export {
  isRateLimitError,
  RateLimitError,
  type RateLimitErrorCode,
  type RateLimitErrorDetails,
} from './errors.js'
export { type FieldWrite, isSingleValuedName, mergeFields } from './headers/field-merge.js'
export {
  createPartitionKeyHasher,
  PARTITION_KEY_BYTES,
  PARTITION_KEY_CACHE_SIZE,
  type PartitionKeyHasher,
} from './headers/partition-key.js'
export { policyName, quotaPerSeconds } from './headers/policy-fields.js'
export {
  type LegacyReset,
  retryAfterSeconds,
  type StandardHeaders,
} from './headers/rate-limit-headers.js'
export {
  type SfBareItem,
  type SfItem,
  type SfParameters,
  serializeBareItem,
  serializeDictionary,
  serializeItem,
  serializeList,
  serializeString,
} from './headers/structured-fields.js'
export type { FieldWriter, HeaderAccessor, HeaderEntries } from './headers/types.js'
export {
  type ClientAddress,
  type ClientIpOptions,
  type ClientIpResolver,
  createClientIpResolver,
  type TrustProxy,
} from './identity/client-ip.js'
export { parseForwarded, parseXForwardedFor } from './identity/forwarded.js'
export {
  createIdentityResolver,
  type Identities,
  type IdentityOptions,
  type IdentityResolver,
  type IdentitySource,
} from './identity/identities.js'
export { formatIp, type IpAddress, parseIp } from './identity/ip.js'
export {
  type Cidr,
  cidrContains,
  createIpMatcher,
  ipKey,
  maskIp,
  NAMED_RANGES,
  type PrefixOptions,
  parseCidr,
} from './identity/ip-prefix.js'
export { ReusedIdentitySource } from './identity/reused-identity-source.js'
export {
  type CheckOptions,
  createLimiter,
  DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
  type DecideOptions,
  type DenyReason,
  type Limiter,
  type LimiterOptions,
  type Logger,
  type MaybePromise,
  type RequestFacts,
  type RuleDecision,
  type StoreErrorContext,
  UNKNOWN_CLIENT_KEY,
  type Verdict,
} from './limiter/index.js'
export {
  headerListMayBeCut,
  NODE_DEFAULT_MAX_HEADERS_COUNT,
  type NodeIncomingHeaders,
} from './node/node-header-limit.js'
export {
  type NodeResponse,
  NodeResponseFieldWriter,
  setNodeResponseFields,
} from './node/node-response-fields.js'
export {
  fieldsForOwnAnswer,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  QUOTA_EXCEEDED_TYPE,
  TEMPORARY_REDUCED_CAPACITY_TYPE,
} from './response/problem.js'
export {
  createResponder,
  type LimitResponse,
  type MissingIdentityResponse,
  type Responder,
  type ResponderOptions,
} from './response/responder.js'
export {
  type Duration,
  defineRules,
  formatIssue,
  HTTP_METHODS,
  type IdentityName,
  type Milliseconds,
  type MissingIdentityPolicy,
  type ParsedRoute,
  parseRoute,
  parseRules,
  type RateAlgorithmName,
  type RateRule,
  type RateRuleConfig,
  type RouteSegment,
  type Rule,
  type RuleConfig,
  type RuleIssue,
  type RuleMatch,
  type RuleMatchConfig,
  type RuleMode,
  RuleValidationError,
  type StoreErrorPolicy,
  type WindowAlgorithmName,
  type WindowRule,
  type WindowRuleConfig,
} from './rules/index.js'
export {
  applyCharges,
  type Charge,
  type MemoryStore,
  type MemoryStoreOptions,
  memoryStore,
  type Outcome,
  type Store,
} from './store/index.js'
export type { WarningCode, WarningOptions } from './warnings.js'
