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
export type { Decision } from './decision.js'
export {
  isRateLimitError,
  RateLimitError,
  type RateLimitErrorCode,
  type RateLimitErrorDetails,
} from './errors.js'
export {
  applyCharges,
  type Charge,
  type MemoryStore,
  type MemoryStoreOptions,
  memoryStore,
  type Outcome,
  type Store,
} from './store/index.js'
