/**
 * `@tollgate/core/adapter`: what a framework adapter is built from. `createAdapterKit` makes one
 * kit per middleware from the rules, the options and a `Framework` descriptor; each request is a
 * `Exchange` the adapter writes fields from, continues or answers, and ends. See
 * docs/adapters/writing-an-adapter.md. The identity resolver and the responder underneath are
 * here too, for code that runs the limiter without a framework, with the key of a client whose
 * address is unknown and the `Retry-After` a store failure answers by default.
 * @module @tollgate/core/adapter
 */

export {
  createExpressRateLimitFieldWriter,
  type ExpressRateLimitDraft,
  type ExpressRateLimitFieldSink,
  type ExpressRateLimitFieldWriter,
  type ExpressRateLimitFigures,
  expressRateLimitResetSeconds,
} from '../headers/express-rate-limit-fields.js'
export { type FieldWrite, isSingleValuedName, mergeFields } from '../headers/field-merge.js'
export type { FieldWriter, HeaderAccessor, HeaderEntries } from '../headers/types.js'
export {
  type ClientAddress,
  type ClientIpResolver,
  createClientIpResolver,
} from '../identity/client-ip.js'
export {
  createIdentityResolver,
  type Identities,
  type IdentityResolver,
  type IdentitySource,
  type UserId,
  userIdOf,
} from '../identity/identities.js'
export { formatIp, type IpAddress, parseIp } from '../identity/ip.js'
export { ipKey } from '../identity/ip-prefix.js'
export { UNKNOWN_CLIENT_KEY } from '../limiter/decide.js'
export { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/types.js'
export {
  createResponder,
  type LimitResponse,
  type Responder,
} from '../response/responder.js'
export { abortOnSignal, endWhenSent, type WebResponse } from '../web-response-end.js'
export {
  type AdapterKit,
  composeAdapterKit,
  createAdapterKit,
  type Exchange,
  type FieldSink,
  type Framework,
  isPromise,
  type KitOptions,
  type Updatable,
  type WriteVerdictFields,
  withUpdate,
} from './kit.js'
export type { ResponseMeter, WatchedResponse } from './response-meter.js'
export type { MeterFor } from './settle-from.js'
