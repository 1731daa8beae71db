export type { CalendarUnit, CalendarWindows, WindowSpan } from './calendar.js'
export { type CarryStrategy, DEFAULT_CARRY } from './carried-use.js'
export { carryState } from './carry.js'
export type { ConcurrencyParams } from './concurrency.js'
export { concurrency } from './concurrency-part.js'
export { type CalendarWindowParams, fixedWindow } from './fixed-window.js'
export { gcra } from './gcra.js'
export { MAX_TIME_MS } from './integer.js'
export { leakyBucket } from './leaky-bucket.js'
export { leakyQueue, type QueueParams } from './leaky-queue.js'
export type { RateParams, WindowParams } from './params.js'
export { slidingLog } from './sliding-log.js'
export { type SlidingWindowParams, slidingWindow } from './sliding-window.js'
export { type AlgorithmState, step } from './step.js'
export type { AlgorithmTable } from './table.js'
export { tokenBucket } from './token-bucket.js'
export type {
  Algorithm,
  AlgorithmName,
  AlgorithmParams,
  QuotaPolicy,
} from './types.js'
