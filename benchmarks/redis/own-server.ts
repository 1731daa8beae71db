// The Redis a benchmark measures. A shared server keeps whatever scripts others have loaded (a
// test run used to leave thousands), and every script a server holds grows the Lua heap its
// collector steps through on script calls: 6,700 held doubled the fixed cost of a call of any
// script on this machine (an empty one: 0.65 to 1.2 µs), so figures taken there would depend on
// what ran before. By default, then, a benchmark starts an empty server of its own.
import { startRedisServer } from '@tollgate/test-utils/redis-server'

/**
 * `REDIS_URL` when set (a server of the user's choosing, measured as it is), else an empty
 * redis-server of the benchmark's own, which `stop` removes.
 */
export async function benchmarkRedis(): Promise<{
  url: string
  own: boolean
  stop(): Promise<void>
}> {
  const given = process.env['REDIS_URL']
  if (given !== undefined && given !== '') return { url: given, own: false, stop: async () => {} }
  const server = await startRedisServer()
  return { url: server.url, own: true, stop: () => server.stop() }
}
