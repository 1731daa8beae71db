export { type AccessList, type AccessLists, accessLists } from './access-lists.js'
export { clientFigures, type FiguresOfLimiter } from './client-figures.js'
export { createLimiter } from './create-limiter.js'
export { clockReader } from './decide.js'
export { type FallbackPart, localFallback } from './fallback.js'
export type {
  ClientFigures,
  FiguresClient,
  FiguresOption,
  FiguresSource,
} from './figures-option.js'
export { limiterOperations } from './operator.js'
export { type PenaltyPart, penalties } from './penalised.js'
export { type ReservationPart, reservations } from './settle.js'
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
  Refusal,
  RequestFacts,
  RuleDecision,
  RulesUpdate,
  SettleOptions,
  SettleResult,
  SettleStatus,
  StoreErrorContext,
  UpdateOptions,
  Verdict,
  WaitSignal,
} from './types.js'
export { rulesUpdater } from './update.js'
