export {
  createLeanLimiter,
  createLimiter,
  DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
} from './create-limiter.js'
export { UNKNOWN_CLIENT_KEY } from './keys.js'
export type {
  CheckOptions,
  DecideOptions,
  DenyReason,
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  RequestFacts,
  RuleDecision,
  StoreErrorContext,
  Verdict,
} from './types.js'
