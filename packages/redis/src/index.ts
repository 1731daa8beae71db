export {
  type IoredisLike,
  ioredisClient,
  type NodeRedisLike,
  nodeRedisClient,
  type RedisScriptClient,
} from './client.js'
export { redisKey } from './keys.js'
export {
  DEFAULT_PREFIX,
  DEFAULT_TIMEOUT_MS,
  type RedisStore,
  type RedisStoreOptions,
  redisStore,
} from './redis-store.js'
export { redisScripts, type Script } from './scripts/index.js'
