import { spawnSync } from 'node:child_process'
import { REDIS_URL, redisAnswers } from '@tollgate/test-utils'
import { type RedisServer, startRedisServer } from '@tollgate/test-utils/redis-server'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'

export { REDIS_URL }

const { CI } = process.env

/**
 * Whether the Redis tests can run. In CI (`CI` set) a missing Redis is an error that fails the
 * run; elsewhere the tests are skipped, and say so.
 */
export const redisAvailable = await redisAnswers(REDIS_URL)

if (!redisAvailable) {
  if (CI) {
    throw new Error(
      `[tollgate] CI needs a Redis server at ${REDIS_URL} (set REDIS_URL), none answered`,
    )
  }
  console.warn(`[tollgate] Redis store tests SKIPPED: no Redis answered at ${REDIS_URL}`)
}

function hasRedisServerBinary(): boolean {
  const result = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  return result.status === 0 && result.stdout.includes('Redis server')
}

/**
 * Whether tests may start servers of their own (a Redis Cluster, a server to kill and restart)
 * from the `redis-server` binary: same policy as above.
 */
export const redisServerBinary = hasRedisServerBinary()

if (!redisServerBinary) {
  if (CI) throw new Error('[tollgate] CI needs the redis-server binary on PATH')
  console.warn('[tollgate] Redis Cluster and restart tests SKIPPED: no redis-server binary on PATH')
}

/** Every key this test process writes to a shared Redis starts with this. */
const RUN_PREFIX = `tgtest:${process.pid}:${Math.random().toString(36).slice(2, 8)}`

/** A key prefix of its own for each test, so tests never see each other's state. */
export function uniquePrefix(label: string): string {
  return `${RUN_PREFIX}:${label}:${Math.random().toString(36).slice(2, 10)}`
}

/**
 * Removes what this test process wrote to the Redis at `url` (some states expire only days
 * later: traces run on their own clock, with long windows).
 */
export async function removeTestKeys(url: string = REDIS_URL): Promise<void> {
  const redis = new Redis(url)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${RUN_PREFIX}:*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.unlink(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

/**
 * A redis-server of the test file's own, started before its tests and stopped after them; the
 * URL, once started. For tests that make Redis cache thousands of scripts (random rule sets,
 * each with scripts of its own): every script a server holds grows the Lua heap its collector
 * steps through on script calls, so on the shared server they would slow every later script
 * call there (about twice the fixed cost of a call with 6,000 held), benchmarks' included.
 */
export function redisOfTheFile(): () => string {
  let server: RedisServer | undefined
  beforeAll(async () => {
    if (redisServerBinary) server = await startRedisServer()
  })
  afterAll(async () => {
    await server?.stop()
  })
  return () => {
    if (server === undefined) throw new Error('the redis-server of this test file is not running')
    return server.url
  }
}
