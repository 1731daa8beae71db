export { systemTimers, type Timers } from '@tollgate/core'
export { createScheduler, type Scheduler, type SchedulerOptions } from '@tollgate/core/store'
export {
  type ClientEvent,
  type ClientOptions,
  createClient,
  type TollgateClient,
} from './client.js'
export type { EventListener } from './events.js'
export { kyHooks } from './ky.js'
export {
  type AcquireOptions,
  type LocalLimiter,
  type LocalLimiterOptions,
  localLimiter,
} from './local-limiter.js'
export { LocalQueueRefusedError } from './local-queue-refused.js'
export type { LocalRule } from './local-rules.js'
export type { RetryOptions } from './retry-policy.js'
export type { Completion } from './send.js'
export type { TokenEstimate } from './spend.js'
