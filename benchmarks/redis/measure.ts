import { Redis } from 'ioredis'

export type Load = {
  /** Decisions per second. */
  readonly rate: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/** A deterministic sequence of identities drawn from `count` keys (a 32-bit LCG). */
export function identities(count: number, length: number, seed = 1): string[] {
  const out = new Array<string>(length)
  let state = seed >>> 0
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    const n = state % count
    out[i] = `ip:10.${n >>> 16}.${(n >>> 8) & 255}.${n & 255}`
  }
  return out
}

/** Runs `decide` over `ids` with `inFlight` requests outstanding at any time. */
export async function runLoad(
  decide: (identity: string) => Promise<boolean>,
  ids: readonly string[],
  inFlight: number,
): Promise<Load> {
  const latencies = new Float64Array(ids.length)
  let next = 0
  let denied = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ids.length) {
        const index = next++
        const begin = performance.now()
        if (!(await decide(ids[index]!))) denied++
        latencies[index] = performance.now() - begin
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  if (denied > 0) throw new Error(`${denied} requests denied: the benchmark limits are too low`)
  latencies.sort()
  return {
    rate: ids.length / seconds,
    p50Ms: latencies[Math.floor(ids.length * 0.5)]!,
    p99Ms: latencies[Math.floor(ids.length * 0.99)]!,
  }
}

/**
 * Counts the writes ioredis makes to its socket: with auto-pipelining off and one request in
 * flight, each write is one request/response exchange, so writes per decision = round trips.
 */
export function countWrites(redis: Redis): { readonly writes: number } {
  const counter = { writes: 0 }
  const stream = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream
  const write = stream.write.bind(stream)
  stream.write = (...args: unknown[]) => {
    counter.writes++
    return write(...args)
  }
  return counter
}

export async function connect(url: string, autoPipelining: boolean): Promise<Redis> {
  const redis = new Redis(url, { enableAutoPipelining: autoPipelining })
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve)
    redis.once('error', reject)
  })
  return redis
}

/** Average MEMORY USAGE of the keys under `prefix` (expiry included), and how many there are. */
export async function memoryPerKey(
  redis: Redis,
  prefix: string,
): Promise<{ bytes: number; keys: number; keyLength: number }> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [nextCursor, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000)
    cursor = nextCursor
    found.push(...batch)
  } while (cursor !== '0')
  let total = 0
  for (const key of found) total += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
  const keyLength = found.reduce((sum, key) => sum + Buffer.byteLength(key), 0)
  const count = Math.max(1, found.length)
  return { bytes: total / count, keys: found.length, keyLength: keyLength / count }
}

/** Deletes every key under `prefix` (never the whole database: the Redis may be shared). */
export async function clear(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [nextCursor, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000)
    cursor = nextCursor
    if (batch.length > 0) await redis.unlink(...batch)
  } while (cursor !== '0')
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Microseconds Redis has spent executing the calls a subject makes, from INFO commandstats: its
 * scripts (EVALSHA and EVAL, whose figures include the commands they run), or, for a subject
 * that runs no script, its INCR. What a call costs Redis besides reading, parsing and answering
 * it, which every subject pays alike.
 */
export async function redisCallUs(admin: Redis): Promise<{ scripts: number; incr: number }> {
  const info = (await admin.info('commandstats')) as string
  const usec = (command: string) =>
    Number(new RegExp(`cmdstat_${command}:calls=\\d+,usec=(\\d+)`).exec(info)?.[1] ?? 0)
  return { scripts: usec('evalsha') + usec('eval'), incr: usec('incr') }
}

/**
 * The microseconds Redis spent inside a subject's calls between two `redisCallUs` readings: its
 * scripts' if it ran any (a script's own INCR, as rate-limit-redis's, is inside its EVALSHA
 * figure: counted once), else its INCRs'.
 */
export function callUsBetween(
  before: { scripts: number; incr: number },
  after: { scripts: number; incr: number },
): number {
  const scripts = after.scripts - before.scripts
  return scripts > 0 ? scripts : after.incr - before.incr
}
