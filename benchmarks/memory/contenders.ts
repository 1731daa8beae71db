/**
 * Everything the memory benchmark compares, each configured as "100 requests per 60 s" and asked
 * for one decision per call, the way its own middleware asks: Tollgate's store and the naive
 * Map synchronously, the peers through the promise their middleware awaits.
 */
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import { gcra, memoryStore, tokenBucket } from '@tollgate/core'
import { MemoryStore as ExpressMemoryStore } from 'express-rate-limit'
import { MemoryStore as HonoMemoryStore } from 'hono-rate-limiter'
import { RateLimiterMemory } from 'rate-limiter-flexible'

const LIMIT = 100
const WINDOW_MS = 60_000

/** Answers "may `key` pass now?"; reads the clock itself, as every limiter must per request. */
export type Decide = (key: string) => boolean | Promise<boolean>

export type Contender = {
  readonly name: string
  /** False for variants whose memory is that of another row. */
  readonly retained?: boolean
  /** The contender its ratios are taken against, if not the naive bucket. */
  readonly versus?: string
  /** True when the decision is a promise that has to be awaited. */
  readonly async: boolean
  /** `capacity`: how many keys the store must be able to hold. */
  readonly create: (capacity: number) => Decide
}

/**
 * The baseline: the spec's in-process `TokenBucketLimiter`, in integer units (so 100 per 60 s
 * cannot drift), one object per key in a `Map`, never evicted. It answers `{ allowed,
 * retryAfterMs }`, and the map is written only for a new key.
 */
function naiveMapBucket(clock: () => number = Date.now): Decide {
  const unitsPerMs = 1 // 100 per 60 000 ms = 1 unit per ms, 600 units per token
  const unitsPerToken = 600
  const capacity = LIMIT * unitsPerToken
  const buckets = new Map<string, { level: number; updatedAt: number }>()
  function take(key: string, now: number): { allowed: boolean; retryAfterMs: number } {
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      bucket = { level: capacity, updatedAt: now }
      buckets.set(key, bucket)
    }
    bucket.level = Math.min(capacity, bucket.level + (now - bucket.updatedAt) * unitsPerMs)
    bucket.updatedAt = now
    if (bucket.level >= unitsPerToken) {
      bucket.level -= unitsPerToken
      return { allowed: true, retryAfterMs: 0 }
    }
    return { allowed: false, retryAfterMs: Math.ceil((unitsPerToken - bucket.level) / unitsPerMs) }
  }
  return (key) => take(key, clock()).allowed
}

/**
 * Tollgate's store, with a bound of 64 GiB so that it never trims the table: its memory
 * is what the table grew to for the keys it holds.
 */
function tollgate(algorithm: 'token_bucket' | 'gcra', clock: () => number = Date.now): Decide {
  const params = { rate: LIMIT, periodMs: WINDOW_MS, burst: LIMIT }
  const rule = algorithm === 'gcra' ? gcra(params) : tokenBucket(params)
  const store = memoryStore({ maxBytes: 2 ** 36 })
  return (key) => store.consumeOne('per-ip', rule, key, 1, clock()).allowed
}

function expressRateLimit(): Decide {
  const store = new ExpressMemoryStore()
  store.init({ windowMs: WINDOW_MS } as Parameters<ExpressMemoryStore['init']>[0])
  return async (key) => (await store.increment(key)).totalHits <= LIMIT
}

function rateLimiterFlexible(): Decide {
  const limiter = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 })
  // A denial rejects with the limiter's result object (not an Error), as its docs show.
  return (key) =>
    limiter.consume(key).then(
      () => true,
      () => false,
    )
}

function honoRateLimiter(): Decide {
  const store = new HonoMemoryStore()
  store.init({ windowMs: WINDOW_MS } as Parameters<HonoMemoryStore['init']>[0])
  return async (key) => (await store.increment(key)).totalHits <= LIMIT
}

/** @fastify/rate-limit's LocalStore behind the promise its plugin wraps every call in. */
function fastifyLocalStore(capacity: number): Decide {
  // The LRU defaults to 5,000 keys; sized here to hold every key, like the others.
  const store = new LocalStore(false, false, Math.max(capacity, 5000))
  return (key) =>
    new Promise<boolean>((resolve, reject) => {
      store.incr(
        key,
        (error: Error | null, result: { current: number }) =>
          error ? reject(error) : resolve(result.current <= LIMIT),
        WINDOW_MS,
        LIMIT,
      )
    })
}

/**
 * Time handed in by the caller instead of read from the system clock: a counter that moves one
 * millisecond every 1,024 decisions. Shows what the clock read costs in the ratios.
 */
function passedInClock(): () => number {
  const start = Date.now() * 1024
  let calls = 0
  return () => Math.floor((start + calls++) / 1024)
}

export const contenders: readonly Contender[] = [
  { name: 'naive Map token bucket', async: false, create: () => naiveMapBucket() },
  {
    name: 'tollgate memoryStore, token bucket',
    async: false,
    create: () => tollgate('token_bucket'),
  },
  { name: 'tollgate memoryStore, GCRA', async: false, create: () => tollgate('gcra') },
  {
    name: 'naive Map token bucket, time passed in',
    async: false,
    retained: false,
    versus: 'naive Map token bucket, time passed in',
    create: () => naiveMapBucket(passedInClock()),
  },
  {
    name: 'tollgate memoryStore, token bucket, time passed in',
    async: false,
    retained: false,
    versus: 'naive Map token bucket, time passed in',
    create: () => tollgate('token_bucket', passedInClock()),
  },
  { name: 'express-rate-limit MemoryStore', async: true, create: expressRateLimit },
  { name: 'rate-limiter-flexible RateLimiterMemory', async: true, create: rateLimiterFlexible },
  { name: 'hono-rate-limiter MemoryStore', async: true, create: honoRateLimiter },
  { name: '@fastify/rate-limit LocalStore', async: true, create: fastifyLocalStore },
]

export function contenderNamed(name: string): Contender {
  const found = contenders.find((contender) => contender.name === name)
  if (found === undefined) throw new Error(`unknown contender ${JSON.stringify(name)}`)
  return found
}
