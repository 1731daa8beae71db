/**
 * `@tollgate/core/usage`: what a call to an LLM API really cost, read from its answer, to
 * settle a charge made before it ran. `readUsage` reads a JSON answer, `sseUsage` a streamed
 * one as it arrives; `usageReader` turns either into a number of tokens by a chosen measure.
 * Pure functions of the answer: no I/O, no Node built-ins.
 * @module @tollgate/core/usage
 */

export {
  measureUsage,
  readUsage,
  type TokenUsage,
  type UsageMeasure,
} from './read-usage.js'
export {
  DEFAULT_MAX_EVENT_LENGTH,
  type SseUsageOptions,
  type SseUsageReader,
  sseUsage,
} from './sse-usage.js'
export { type UsageReader, type UsageReaderOptions, usageReader } from './usage-reader.js'
