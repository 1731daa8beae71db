/**
 * `@tollgate/core/fields`: reads the rate-limit fields of a response (`RateLimit`,
 * `RateLimit-Policy`, `X-RateLimit-*`, `Retry-After`) into plain numbers, for a client that
 * waits as the server asks. Small, and with no limiter in it.
 * @module @tollgate/core/fields
 */
export { parseHttpDate } from './http-date.js'
export { EPOCH_MS_FROM, EPOCH_SECONDS_FROM, resetToMs } from './legacy-fields.js'
export { readRateLimitFields } from './read-fields.js'
export { MAX_WAIT_MS, parseRetryAfter } from './retry-after.js'
export {
  parseSfDictionary,
  parseSfList,
  type SfMember,
  type SfValue,
} from './structured-parse.js'
export type { FieldForm, HeaderSource, ReadFields, ReadPolicy } from './types.js'
