export { createLimiter } from './create-limiter.js'
export { UNKNOWN_CLIENT_KEY } from './decide.js'
export type {
  AcquireOptions,
  CheckOptions,
  DecideOptions,
  DenyReason,
  HoldOptions,
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  RequestFacts,
  RuleDecision,
  StoreErrorContext,
  Verdict,
  WaitSignal,
} from './types.js'
export { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from './types.js'
