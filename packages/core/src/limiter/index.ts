export { type AccessList, type AccessLists, accessLists } from './access-lists.js'
export { createLimiter } from './create-limiter.js'
export { limiterOperations } from './operator.js'
export { type PenaltyPart, penalties } from './penalised.js'
export type {
  AcquireOptions,
  CheckOptions,
  DecideOptions,
  DenyReason,
  HoldOptions,
  KeyReport,
  Limiter,
  LimiterOperations,
  LimiterOptions,
  Logger,
  MaybePromise,
  OperatorOptions,
  RequestFacts,
  RuleDecision,
  SettleOptions,
  SettleResult,
  SettleStatus,
  StoreErrorContext,
  Verdict,
  WaitSignal,
} from './types.js'
