import { Redis } from 'ioredis'

const { CI, REDIS_URL: url } = process.env

/** The Redis that tests use: `REDIS_URL`, or the local default. */
export const REDIS_URL = url || 'redis://127.0.0.1:6379'

/** True when a Redis server answers PING at `url` within a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  probe.on('error', () => {})
  try {
    await probe.connect()
    return (await probe.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

/**
 * Whether a test that needs Redis should run. In CI (`ci` true) a missing Redis throws, so the
 * run fails; elsewhere the test is skipped, and a warning says so.
 */
export async function redisForTest(
  what: string,
  url: string = REDIS_URL,
  ci: boolean = Boolean(CI),
): Promise<boolean> {
  if (await redisAnswers(url)) return true
  if (ci)
    throw new Error(`[tollgate] CI needs a Redis server at ${url} (set REDIS_URL) for ${what}`)
  console.warn(`[tollgate] ${what} SKIPPED: no Redis answered at ${url}`)
  return false
}
