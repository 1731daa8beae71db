import { randomUUID } from 'node:crypto'
import { systemTimers, type Timers } from '@tollgate/core'
import {
  checkFunction,
  checkWhole,
  invalidOption,
  refuseUnknownOptions,
} from '@tollgate/core/store'
import type { RedisScriptClient } from './client.js'
import { script } from './scripts/index.js'
import { DEFAULT_PREFIX } from './store-options.js'

// How many gateway instances are alive, for `fallbackStore`'s shares: each instance keeps a
// heartbeat in one sorted set (member: its id, score: when its heartbeat ends, on Redis's clock)
// and reads how many heartbeats are current. The last count read is kept while Redis fails,
// which is exactly when the fallback store asks for it.

/** Renews this instance's heartbeat, drops the ended ones, and answers the live count. */
const beatScript = script(`local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[3] == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('ZCARD', KEYS[1])`)

/**
 * Options of `redisMembership`: the connection, the group and how often each instance says it is
 * alive.
 */
export type RedisMembershipOptions = {
  readonly client: RedisScriptClient
  /** The key prefix, as the store's. @default 'tg' */
  readonly prefix?: string
  /** Instances counted together (one app, one set of rules). @default 'gateways' */
  readonly group?: string
  /** How often the heartbeat is renewed, ms. @default 1000 */
  readonly intervalMs?: number
  /**
   * How long a heartbeat lasts, ms: an instance that stopped is no longer counted this long
   * after its last one. At least 2 × `intervalMs`. @default 3 × intervalMs
   */
  readonly ttlMs?: number
  /**
   * The count before Redis first answers: an instance started during an outage has seen no
   * heartbeat, and would otherwise take a share of 1/1. Set it to the usual number of instances.
   * @default 1
   */
  readonly initialCount?: number
  /** The timers the heartbeat runs on (tests inject their own). @default the runtime's */
  readonly timers?: Timers
}

/**
 * What `redisMembership` returns: the live count, for `fallbackStore`'s `instances`, and the
 * heartbeat's controls.
 */
export type RedisMembership = {
  /**
   * The live instances at the last heartbeat Redis answered, this one included (`initialCount`
   * before the first answer). Pass it as `fallbackStore`'s `instances`.
   */
  readonly count: () => number
  /** Renews the heartbeat now; resolves with the count (the last one kept if Redis fails). */
  beat(): Promise<number>
  /** Stops the heartbeat and leaves the group, so the others count one fewer at once. */
  close(): Promise<void>
}

const WHERE = 'redisMembership()'

/**
 * Counts the live instances of a group in Redis by their heartbeats, starting at once.
 * @example
 * const membership = redisMembership({ client: ioredisClient(redis) })
 * const store = fallbackStore(redisStore({ client: ioredisClient(redis) }), { instances: membership.count })
 */
export function redisMembership(options: RedisMembershipOptions): RedisMembership {
  refuseUnknownOptions(
    options,
    ['client', 'prefix', 'group', 'intervalMs', 'ttlMs', 'initialCount', 'timers'],
    WHERE,
  )
  const client = options.client
  if (typeof client?.eval !== 'function' || typeof client.evalsha !== 'function') {
    throw invalidOption(
      'client',
      'expected a RedisScriptClient (ioredisClient(...), nodeRedisClient(...))',
      WHERE,
    )
  }
  const intervalMs = checkWhole('intervalMs', options.intervalMs ?? 1000, { min: 1 }, WHERE)
  const ttlMs = checkWhole('ttlMs', options.ttlMs ?? 3 * intervalMs, { min: 2 * intervalMs }, WHERE)
  const timers = options.timers ?? systemTimers
  checkFunction('timers.setTimeout', timers.setTimeout, WHERE)
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const group = options.group ?? 'gateways'
  for (const [field, value] of [
    ['prefix', prefix],
    ['group', group],
  ] as const) {
    if (typeof value !== 'string' || value === '') {
      throw invalidOption(field, 'expected a non-empty string', WHERE)
    }
  }
  const key = `${prefix}:members:{${group}}`
  const id = randomUUID()
  let count = checkWhole('initialCount', options.initialCount ?? 1, { min: 1 }, WHERE)
  let closed = false
  let timer: unknown
  let inFlight: Promise<number> | undefined

  const send = async (leave: boolean): Promise<number> => {
    const keys = [key]
    const args = [id, String(ttlMs), leave ? 'leave' : 'beat']
    try {
      return Number(await client.evalsha(beatScript.sha, keys, args))
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
      return Number(await client.eval(beatScript.source, keys, args))
    }
  }
  const beat = (): Promise<number> => {
    // One heartbeat at a time: against a hung Redis they would otherwise pile up.
    inFlight ??= send(false)
      .then(
        (live) => {
          if (Number.isSafeInteger(live) && live >= 1) count = live
          return count
        },
        () => count,
      )
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }
  const schedule = () => {
    if (closed) return
    timer = timers.setTimeout(() => {
      void beat().then(schedule)
    }, intervalMs)
    ;(timer as { unref?: () => void } | undefined)?.unref?.()
  }
  void beat().then(schedule)
  return {
    count: () => count,
    beat,
    async close() {
      closed = true
      if (timer !== undefined) timers.clearTimeout(timer)
      await send(true).catch(() => undefined)
    },
  }
}
