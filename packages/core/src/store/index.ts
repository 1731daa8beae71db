/**
 * `@tollgate/core/store`: what a store is built from. A `Store` applies a request's `Charge`s as
 * one unit and answers an `Outcome`; `applyCharges` is that contract over any state you can read
 * and write, `step` one algorithm's decision on one state. The checks every store makes on its
 * inputs (`checkCost`, `checkTime`, `wholeMs`), the errors it throws, and the option checks and
 * scheduler a store's own options and timers use are here too. Apps use `@tollgate/core`.
 * @module @tollgate/core/store
 */

export type { CalendarWindows, WindowSpan } from '../algorithms/calendar.js'
export { MAX_TIME_MS } from '../algorithms/integer.js'
export { DEFAULT_SETTLE_WITHIN_MS, reservable } from '../algorithms/reservable.js'
export { MAX_SLIDING_LOG_LIMIT } from '../algorithms/sliding-log.js'
export {
  type AlgorithmState,
  checkCost,
  checkTime,
  type StepResult,
  step,
  wholeMs,
} from '../algorithms/step.js'
export type {
  Algorithm,
  AlgorithmName,
  AlgorithmParams,
  QuotaPolicy,
  StateSlots,
} from '../algorithms/types.js'
export type { Clock } from '../clock.js'
export type { Decision } from '../decision.js'
export {
  isRateLimitError,
  RateLimitError,
  type RateLimitErrorCode,
  type RateLimitErrorDetails,
} from '../errors.js'
export {
  checkBoolean,
  checkFunction,
  checkMethods,
  checkOneOf,
  checkWhole,
  invalidOption,
  shown,
  type WholeRange,
} from '../options/option-values.js'
export { refuseUnknownOptions } from '../options/unknown-options.js'
export {
  createScheduler,
  type Scheduler,
  type SchedulerOptions,
  type Timers,
} from '../wait/scheduler.js'
export { applyCharges } from './apply-charges.js'
export { blockLengthMs } from './penalty-book.js'
export type {
  Charge,
  FiguresCarry,
  KeyRef,
  KeyStatus,
  Offences,
  Outcome,
  PenalisedOutcome,
  Penalty,
  RuleChange,
  Settlement,
  Store,
} from './types.js'
