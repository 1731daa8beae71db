/**
 * `@tollgate/express-rate-limit`: express-rate-limit 8's API on Tollgate's engine. Change the
 * import and keep the options:
 *
 *   import rateLimit from '@tollgate/express-rate-limit' // was: from 'express-rate-limit'
 *
 * See docs/guides/migrating.md for what is the same, what Tollgate adds, and the way on to
 * Tollgate's own rules.
 */
export { ipKeyGenerator } from './ip-key-generator.js'
export { MemoryStore } from './memory-store.js'
export { rateLimit as default, rateLimit } from './rate-limit.js'
export { DAY, HOUR, MINUTE, SECOND } from './time-constants.js'
export type {
  AugmentedRequest,
  ClientRateLimitInfo,
  DraftHeadersVersion,
  EnabledValidations,
  IncrementCallback,
  IncrementResponse,
  LegacyStore,
  Logger,
  Options,
  RateLimitExceededEventHandler,
  RateLimitInfo,
  RateLimitRequestHandler,
  Store,
  ValueDeterminingMiddleware,
} from './types.js'
