/**
 * `@tollgate/cloudflare`: a store for Cloudflare Workers that keeps each key's state in a Durable
 * Object, so every Worker in every location counts against one exact limit.
 */
export {
  type DurableObjectStoreOptions,
  durableObjectStore,
  type LimiterNamespace,
  type LimiterStub,
} from './durable-object-store.js'
export { type LimiterObjectState, TollgateLimiter } from './limiter-object.js'
export type { LimiterStorage } from './object-states.js'
