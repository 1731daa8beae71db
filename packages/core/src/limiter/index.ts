export { createLimiter } from './create-limiter.js'
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
