export {
  type IoredisLike,
  ioredisClient,
  type NodeRedisLike,
  nodeRedisClient,
  type RedisScriptClient,
} from './client.js'
export { redisKey } from './keys.js'
export type { LeaseStats } from './lease/lease-table.js'
export {
  type LeasedStore,
  type LeasedStoreOptions,
  leasedStore,
} from './lease/leased-store.js'
export {
  DEFAULT_LEASE_SHARE,
  DEFAULT_LEASE_TTL_MS,
  type LeasedRule,
  type LeaseOptions,
} from './lease/options.js'
export {
  type RedisMembership,
  type RedisMembershipOptions,
  redisMembership,
} from './membership.js'
export { type RedisStore, redisStore } from './redis-store.js'
export { redisScripts, type Script } from './scripts/index.js'
export { DEFAULT_PREFIX, DEFAULT_TIMEOUT_MS, type RedisStoreOptions } from './store-options.js'
