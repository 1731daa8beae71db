/**
 * `@tollgate/core/simulate`: replays a trace of arrivals through rules on a virtual clock, with
 * the real limiter and memory store, and returns every decision and each rule's state over
 * time. Its own entry point, so that apps which only limit do not bundle it.
 * @module @tollgate/core/simulate
 */

export { algorithmOfRule } from './rule-algorithm.js'
export {
  burst,
  type Lane,
  SCENARIOS,
  type Scenario,
  scenarioNamed,
  simulateLanes,
} from './scenarios.js'
export { simulate } from './simulate.js'
export { admittedBetween } from './summary.js'
export { parseTrace, type TraceFormat } from './trace.js'
export { TraceError } from './trace-error.js'
export type {
  Arrival,
  SimulatedRequest,
  SimulateOptions,
  Simulation,
  StateSample,
} from './types.js'
