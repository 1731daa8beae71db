import { createHash } from 'node:crypto'
import {
  createLimiter,
  fixedWindow,
  gcra,
  leakyBucket,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Algorithm, Charge } from '@tollgate/core/store'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { Ratelimit } from '@upstash/ratelimit'
import type { Redis } from 'ioredis'
import { RedisStore } from 'rate-limit-redis'
import { RateLimiterRedis } from 'rate-limiter-flexible'

/**
 * One way of deciding a request against Redis. `high` limits admit every request (for speed);
 * `typical` is 100 per minute (for memory: state that lives long enough to be measured).
 */
export type Subject = {
  readonly name: string
  /** The key prefix its state lives under, for memory sampling and clean-up. */
  readonly prefix: string
  /** Builds the decision function over one ioredis connection. */
  setup(redis: Redis, limits?: Limits): Promise<(identity: string) => Promise<boolean>>
}

type Limits = 'high' | 'typical'

const HIGH = 1_000_000
const TYPICAL = 100

function tollgate(
  name: string,
  build: (limit: number) => readonly Algorithm[],
  identities = 1,
  layout: 'rule' | 'identity' = 'rule',
  expiryMarginMs?: number,
): Subject {
  // Short enough that key names weigh as in an app's own prefix ('tg').
  const prefix =
    layout === 'identity'
      ? 'bench:tg:1key'
      : `bench:tg:${expiryMarginMs === undefined ? name : 'kept'}`
  return {
    name: `tollgate ${name}`,
    prefix,
    async setup(redis, limits = 'high') {
      const algorithms = build(limits === 'high' ? HIGH : TYPICAL)
      // The store's defaults (a 250 ms budget per call): calls over it are counted (overBudget).
      const store = redisStore({ client: ioredisClient(redis), prefix, layout, expiryMarginMs })
      return async (identity) => {
        const charges: Charge[] = algorithms.map((algorithm, i) => ({
          rule: `r${i}`,
          algorithm,
          key: i < identities ? identity : `${identity}:${i}`,
          cost: 1,
          shadow: false,
        }))
        try {
          const outcome = await store.consume(charges, 0)
          return outcome.decisions.every((d) => d.allowed)
        } catch (error) {
          // Over the store's budget (a loaded machine): counted and reported, as a limiter's
          // failure policy would have decided it, rather than waited for.
          if ((error as { code?: unknown }).code !== 'ERR_RL_STORE_UNAVAILABLE') throw error
          overBudget.calls++
          return true
        }
      }
    },
  }
}

/**
 * Tollgate GCRA with its keys kept a minute past freshness (`expiryMarginMs: 60_000`; the default
 * is 0 on the server's clock). At the benchmark's limits a GCRA state is fresh again 0.06 ms
 * after its request, so with the default every key expires, and Redis deletes it, within the
 * measured load; rate-limit-redis keeps its counter for its minute-long window, and its keys
 * expire after the load. Kept a minute, Tollgate's do too: the two rows apart are what deleting
 * the expired keys costs the measured load.
 */
export const TOLLGATE_GCRA_KEPT: Subject = tollgate(
  'gcra, keys kept a minute',
  (limit) => [gcra(rate(limit))],
  1,
  'rule',
  60_000,
)

/** Tollgate calls that failed with ERR_RL_STORE_UNAVAILABLE (over the 250 ms budget). */
export const overBudget = { calls: 0 }

const rate = (limit: number) => ({ rate: limit, periodMs: 60_000, burst: limit })
const window = (limit: number) => ({ limit, windowMs: 60_000 })

export const TOLLGATE: readonly Subject[] = [
  tollgate('gcra', (limit) => [gcra(rate(limit))]),
  tollgate('token_bucket', (limit) => [tokenBucket(rate(limit))]),
  tollgate('leaky_bucket', (limit) => [leakyBucket(rate(limit))]),
  tollgate('fixed_window', (limit) => [fixedWindow(window(limit))]),
  tollgate('sliding_window', (limit) => [slidingWindow(window(limit))]),
  tollgate('sliding_log', (limit) => [slidingLog(window(Math.min(limit, 100_000)))]),
  // Three rules charged together, one script call.
  tollgate(
    '3 rules',
    (limit) => [gcra(rate(limit)), tokenBucket(rate(limit)), slidingWindow(window(limit))],
    3,
  ),
  // The same three rules, their states in one value per identity (`layout: 'identity'`).
  tollgate(
    '3 rules, one key per identity',
    (limit) => [gcra(rate(limit)), tokenBucket(rate(limit)), slidingWindow(window(limit))],
    3,
    'identity',
  ),
]

/**
 * Tollgate as apps and adapters call it: `limiter.decide` over a Redis store on its default
 * options, rules written as data (the rule index, the key, the cost, the verdict), the
 * store's promise turned into a verdict. `algorithms` are the rules' algorithm names, each with
 * the benchmark's high limits; every rule keys on the client IP.
 */
function tollgateLimiter(
  name: string,
  algorithms: readonly ('gcra' | 'token_bucket' | 'sliding_window')[],
  layout: 'rule' | 'identity' | undefined,
  // Short, as the store-path subjects' prefixes: key names weigh in the memory figures.
  prefix: string,
): Subject {
  return {
    name: `tollgate ${name}`,
    prefix,
    async setup(redis, limits = 'high') {
      const limit = limits === 'high' ? HIGH : TYPICAL
      const rules = algorithms.map((algorithm, i) =>
        algorithm === 'sliding_window'
          ? { id: `r${i}`, match: { identity: 'ip' }, algorithm, limit, window: '1m' }
          : {
              id: `r${i}`,
              match: { identity: 'ip' },
              algorithm,
              rate: limit,
              period: '1m',
              burst: limit,
            },
      )
      const store = redisStore({
        client: ioredisClient(redis),
        prefix,
        ...(layout === undefined ? {} : { layout }),
      })
      const limiter = createLimiter({
        rules: rules as Parameters<typeof createLimiter>[0]['rules'],
        store,
        // Over the store's budget (a loaded machine): counted, admitted as fail-open does.
        onError: () => {
          overBudget.calls++
        },
      })
      return async (identity) => {
        // What an adapter hands the limiter: the request's method, path and client IP.
        const verdict = await limiter.decide({
          method: 'GET',
          path: '/',
          identities: { ip: identity.slice(3) },
        })
        return verdict.allowed
      }
    },
  }
}

/**
 * The limiter path: one GCRA rule and three rules on one client IP, on the store's defaults
 * (the default layout), and the three rules with `layout: 'identity'` named.
 */
export const TOLLGATE_LIMITER: readonly Subject[] = [
  tollgateLimiter('gcra, limiter.decide', ['gcra'], undefined, 'bench:tg:L1'),
  tollgateLimiter(
    '3 rules, limiter.decide',
    ['gcra', 'token_bucket', 'sliding_window'],
    undefined,
    'bench:tg:L3',
  ),
  tollgateLimiter(
    "3 rules, limiter.decide, layout 'identity'",
    ['gcra', 'token_bucket', 'sliding_window'],
    'identity',
    'bench:tg:L3i',
  ),
]

/** The floor: one INCR, no script, no expiry, no decision logic. */
export const INCR: Subject = {
  name: 'plain INCR (floor)',
  prefix: 'bench:incr',
  async setup(redis) {
    return async (identity) => (await redis.incr(`bench:incr:${identity}`)) <= HIGH
  },
}

/**
 * The classic one-key GCRA script, no library around it: the server's TIME, GET, SET with the
 * expiry at the new theoretical arrival time, reply { allowed, retry }. What any script that
 * reads and writes a state per decision costs, next to INCR; the "one-key GCRA script".
 */
const GCRA_REFERENCE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval, tolerance = tonumber(ARGV[1]), tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local next = tat + interval
if next - now > tolerance + interval then return { 0, math.ceil(next - now - tolerance - interval) } end
redis.call('SET', KEYS[1], next, 'PX', math.ceil(next - now))
return { 1, 0 }`

export const GCRA_REFERENCE: Subject = {
  name: 'one-key GCRA script (reference)',
  prefix: 'bench:gcra-ref',
  async setup(redis, limits = 'high') {
    const limit = limits === 'high' ? HIGH : TYPICAL
    const interval = String(60_000 / limit)
    const tolerance = String((60_000 / limit) * (limit - 1))
    const sha = (await redis.script('LOAD', GCRA_REFERENCE_LUA)) as string
    return async (identity) => {
      const reply = (await redis.evalsha(
        sha,
        1,
        `bench:gcra-ref:${identity}`,
        interval,
        tolerance,
      )) as number[]
      return reply[0] === 1
    }
  },
}

/**
 * What any exact script on the server's clock does before deciding anything: TIME, GET of the
 * state, SET of a new one with an absolute expiry, and a reply of the three integers a Tollgate
 * decision needs (the server's time, what is left, the reset). No arithmetic: the floor under
 * Tollgate's one-request scripts, next to rate-limit-redis's INCR and PTTL with no clock.
 */
const STATE_FLOOR_LUA = `
local t = redis.call('TIME')
local v = redis.call('GET', KEYS[1])
local now = t[1] * 1000
redis.call('SET', KEYS[1], 'state', 'PXAT', string.format('%d', now + 60000))
return { now, 1, 60000 }`

/**
 * STATE_FLOOR_LUA with the time given by the caller (ARGV[1]) instead of read from TIME: the
 * two apart are what reading the server's clock costs a script.
 */
const STATE_FLOOR_CALLER_TIME_LUA = `
local v = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[1])
redis.call('SET', KEYS[1], 'state', 'PXAT', string.format('%d', now + 60000))
return { now, 1, 60000 }`

/** A subject that calls one script, keyed on the identity, with `args` made per call. */
function scriptSubject(
  name: string,
  prefix: string,
  lua: string,
  args: () => readonly string[] = () => [],
): Subject {
  return {
    name,
    prefix,
    async setup(redis) {
      const sha = (await redis.script('LOAD', lua)) as string
      return async (identity) => {
        const reply = (await redis.evalsha(sha, 1, `${prefix}:${identity}`, ...args())) as number[]
        return reply[1] === 1
      }
    },
  }
}

export const STATE_FLOOR = scriptSubject(
  'TIME, GET, SET and a 3-integer reply (no decision)',
  'bench:floor',
  STATE_FLOOR_LUA,
)

export const STATE_FLOOR_CALLER_TIME = scriptSubject(
  "GET, SET and a 3-integer reply on the caller's time (no TIME, no decision)",
  'bench:floor-caller',
  STATE_FLOOR_CALLER_TIME_LUA,
  () => [String(Date.now())],
)

/**
 * Tollgate's own one-request GCRA script, exactly as the store generates and sends it, called
 * with ioredis's plain `evalsha` and no store around it: what the script alone costs a lone
 * request, the floor under the `tollgate gcra` row at 1 in flight. Its SHA is taken from the
 * store's first call.
 */
export const TOLLGATE_GCRA_SCRIPT: Subject = {
  name: 'tollgate gcra, its script called bare',
  prefix: 'bench:tg:bare',
  async setup(redis, limits = 'high') {
    const limit = limits === 'high' ? HIGH : TYPICAL
    const algorithm = gcra(rate(limit))
    let sha: string | undefined
    const client = ioredisClient(redis)
    const store = redisStore({
      client: {
        evalsha: (hash, keys, args) => {
          sha = hash
          return client.evalsha(hash, keys, args)
        },
        eval: (source, keys, args) => client.eval(source, keys, args),
      },
      prefix: 'bench:tg:bare',
    })
    await store.consume([{ rule: 'r0', algorithm, key: 'warm', cost: 1, shadow: false }], 0)
    if (sha === undefined) throw new Error('the store sent no script')
    const scriptSha = sha
    // The store's own key (`keyOf`), joined here without it: the benchmark's identities need no
    // escapes, so the two agree, and the store's encoding stays out of the bare call.
    const keyOf = (identity: string) => `bench:tg:bare:r0:{${identity}}`
    if (keyOf('ip:10.0.0.1') !== store.keyOf('r0', 'ip:10.0.0.1')) {
      throw new Error(
        `the bare call's keys are not the store's: ${store.keyOf('r0', 'ip:10.0.0.1')}`,
      )
    }
    return async (identity) => {
      const reply = (await redis.evalsha(scriptSha, 1, keyOf(identity), '1')) as number[]
      return reply[1]! >= 0
    }
  },
}

export const PEERS: readonly Subject[] = [
  {
    name: 'rate-limit-redis',
    prefix: 'bench:rlr:',
    async setup(redis, limits = 'high') {
      const store = new RedisStore({
        prefix: 'bench:rlr:',
        sendCommand: (command: string, ...args: string[]) =>
          redis.call(command, ...args) as Promise<never>,
      })
      store.init({ windowMs: 60_000 } as Parameters<RedisStore['init']>[0])
      const limit = limits === 'high' ? HIGH : TYPICAL
      return async (identity) => (await store.increment(identity)).totalHits <= limit
    },
  },
  {
    name: 'rate-limiter-flexible',
    prefix: 'bench:rlf',
    async setup(redis, limits = 'high') {
      const limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: 'bench:rlf',
        points: limits === 'high' ? HIGH : TYPICAL,
        duration: 60,
      })
      return async (identity) => {
        await limiter.consume(identity)
        return true
      }
    },
  },
  upstash('slidingWindow', (limit) => Ratelimit.slidingWindow(limit, '60 s')),
  upstash('tokenBucket', (limit) => Ratelimit.tokenBucket(limit, '60 s', limit)),
]

/**
 * @upstash/ratelimit normally talks to Upstash over HTTP (@upstash/redis), which plain Redis
 * does not speak. Its calls are `evalsha(sha, keys, args)` and `eval(script, keys, args)`,
 * served here by ioredis: this measures its Lua scripts and client logic on the same Redis, not
 * an HTTP hop. Its scripts start with `#!lua flags=allow-key-locking`, a flag Redis 7.0 refuses
 * ("Unexpected flag in script shebang"); the adapter drops that first line and runs the body
 * unchanged, under the SHA of the body.
 */
function upstash(
  name: string,
  limiter: (limit: number) => ConstructorParameters<typeof Ratelimit>[0]['limiter'],
): Subject {
  const prefix = `bench:upstash:${name}`
  return {
    name: `@upstash/ratelimit ${name}*`,
    prefix,
    async setup(redis, limits = 'high') {
      const bodyShas = new Map<string, string>()
      const body = (script: string) => script.replace(/^#!lua[^\n]*\n/, '')
      const adapter = {
        evalsha: (sha: string, keys: string[], args: unknown[]) =>
          redis.evalsha(bodyShas.get(sha) ?? sha, keys.length, ...keys, ...args.map(String)),
        eval: (script: string, keys: string[], args: unknown[]) => {
          const sha1 = (text: string) => createHash('sha1').update(text).digest('hex')
          bodyShas.set(sha1(script), sha1(body(script)))
          return redis.eval(body(script), keys.length, ...keys, ...args.map(String))
        },
      }
      const ratelimit = new Ratelimit({
        redis: adapter as unknown as ConstructorParameters<typeof Ratelimit>[0]['redis'],
        limiter: limiter(limits === 'high' ? HIGH : TYPICAL),
        prefix,
        analytics: false,
      })
      return async (identity) => (await ratelimit.limit(identity)).success
    },
  }
}
