// A rollout of new figures on one Redis server: processes on different versions of a rule share
// its keys; none rolls a newer state back, and none loses or counts twice a unit.
import { ioredisClient } from '@tollgate/redis'
import { Redis } from 'ioredis'
import { afterAll, describe } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys } from './support/redis-env.js'
import { describeRollout } from './support/rollout.js'

describe.skipIf(!redisAvailable)('rules changed while running, during a rollout', () => {
  afterAll(async () => {
    await removeTestKeys()
  })
  describeRollout('two processes on one Redis', async () => {
    const redis = new Redis(REDIS_URL)
    return {
      client: ioredisClient(redis),
      close: async () => {
        redis.disconnect()
      },
    }
  })
})
