export { fixedWindow } from './fixed-window.js'
export { gcra } from './gcra.js'
export { MAX_TIME_MS } from './integer.js'
export { leakyBucket } from './leaky-bucket.js'
export type { RateParams, WindowParams } from './params.js'
export { MAX_SLIDING_LOG_LIMIT, slidingLog } from './sliding-log.js'
export { slidingWindow } from './sliding-window.js'
export {
  type AlgorithmState,
  checkCost,
  checkTime,
  type StepResult,
  step,
  wholeMs,
} from './step.js'
export type { AlgorithmTable } from './table.js'
export { tokenBucket } from './token-bucket.js'
export type {
  Algorithm,
  AlgorithmName,
  AlgorithmParams,
  QuotaPolicy,
  StateSlots,
} from './types.js'
