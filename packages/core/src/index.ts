/**
 * `@tollgate/core`: what apps use. Rules and their loading, the limiter, the algorithms, the
 * stores, errors, the clock, and the types of options and results. An adapter
 * (`@tollgate/express`, `-koa`, `-hono`) re-exports all of it. What a store is built from is
 * `@tollgate/core/store`; what an adapter is built from, `@tollgate/core/adapter`; Node's
 * response writer, `@tollgate/core/node`.
 * @module @tollgate/core
 */

export type { CoreOptions, RefundWhen, RequestHooks } from './adapter/options.js'
export type { RateLimitParts } from './adapter/parts.js'
export type { CostOfResponse, SettleResponse, SettleSource } from './adapter/response-meter.js'
export {
  DEFAULT_MAX_BODY_BYTES,
  type ResponseSettler,
  type SettleFromOptions,
  settleFrom,
} from './adapter/settle-from.js'
export {
  type LoadShedder,
  loadShedder,
  type ShedEvent,
  type ShedOptions,
  type ShedReason,
} from './adapter/shed.js'
export {
  type Algorithm,
  type AlgorithmName,
  type AlgorithmParams,
  type AlgorithmTable,
  type CalendarUnit,
  type CalendarWindowParams,
  type CalendarWindows,
  type CarryStrategy,
  type ConcurrencyParams,
  carryState,
  concurrency,
  DEFAULT_CARRY,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  type QueueParams,
  type QuotaPolicy,
  type RateParams,
  type SlidingWindowParams,
  slidingLog,
  slidingWindow,
  tokenBucket,
  type WindowParams,
  type WindowSpan,
} from './algorithms/index.js'
export { type Clock, systemClock } from './clock.js'
export type { Decision } from './decision.js'
export {
  isRateLimitError,
  RateLimitError,
  type RateLimitErrorCode,
  type RateLimitErrorDetails,
} from './errors.js'
export {
  draft6Headers,
  draft7Headers,
  draft12Headers,
  type HeaderFamily,
  type LegacyReset,
  type StandardHeaders,
  xRateLimitHeaders,
} from './headers/families.js'
export {
  createPartitionKeyHasher,
  type PartitionKeyHasher,
} from './headers/partition-key.js'
export type { ClientIpOptions, TrustProxy } from './identity/client-ip.js'
export {
  type ApiKeyReader,
  apiKeyIdentity,
  type IdentityOptions,
  type UserId,
} from './identity/identities.js'
export type { PrefixOptions } from './identity/ip-prefix.js'
export { type ProxyTrust, trustedProxies } from './identity/proxy-trust.js'
export {
  type AccessList,
  type AccessLists,
  type AcquireOptions,
  accessLists,
  type CheckOptions,
  type ClientFigures,
  clientFigures,
  clockReader,
  createLimiter,
  type DecideOptions,
  type DenyReason,
  type FallbackPart,
  type FiguresClient,
  type FiguresOfLimiter,
  type FiguresOption,
  type FiguresSource,
  type HoldOptions,
  type KeyReport,
  type Limiter,
  type LimiterOperations,
  type LimiterOptions,
  type Logger,
  limiterOperations,
  localFallback,
  type MaybePromise,
  type OperatorOptions,
  type PenaltyPart,
  penalties,
  type Refusal,
  type RequestFacts,
  type ReservationPart,
  type RuleDecision,
  type RulesUpdate,
  reservations,
  rulesUpdater,
  type SettleOptions,
  type SettleResult,
  type SettleStatus,
  type StoreErrorContext,
  type UpdateOptions,
  type Verdict,
  type WaitSignal,
} from './limiter/index.js'
export { type RouteMatching, routeMatching } from './limiter/route-matching.js'
export { partitionKeys } from './response/partition-keys.js'
export { PROBLEM_CONTENT_TYPE, type ProblemDetails } from './response/problem.js'
export {
  type Denial,
  type MissingIdentityResponse,
  missingIdentityStatus,
  type ResponderOptions,
} from './response/responder.js'
export {
  type ConcurrencyAlgorithmName,
  type ConcurrencyRule,
  type ConcurrencyRuleConfig,
  type Duration,
  defineRules,
  formatIssue,
  HTTP_METHODS,
  type IdentityName,
  type Milliseconds,
  type MissingIdentityPolicy,
  type ParsedRoute,
  type PenaltyConfig,
  type PenaltyRule,
  parseRoute,
  parseRules,
  type QueueRule,
  type QueueRuleConfig,
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
  type RulesMustBeLiteral,
  RuleValidationError,
  type StoreErrorPolicy,
  type WidenedRulesError,
  type WindowAlgorithmName,
  type WindowRule,
  type WindowRuleConfig,
} from './rules/index.js'
export { shadowDeniedHook } from './shadow-hook.js'
export {
  type FallbackStats,
  type FallbackStore,
  fallbackStore,
} from './store/fallback/fallback-store.js'
export type { FallbackStoreOptions, OutageEvent } from './store/fallback/options.js'
export { type MapStore, type MapStoreOptions, mapStore } from './store/map-store.js'
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from './store/memory-store.js'
export type { FiguresCarry, RuleChange, Store } from './store/types.js'
export {
  measureUsage,
  readUsage,
  type SseUsageOptions,
  type SseUsageReader,
  sseUsage,
  type TokenUsage,
  type UsageMeasure,
  type UsageReader,
  type UsageReaderOptions,
  usageReader,
} from './usage/index.js'
export { systemTimers, type Timers } from './wait/scheduler.js'
export type { WarningCode, WarningOptions } from './warnings.js'
