import {
  type Clock,
  checkBoolean,
  checkMethods,
  checkOneOf,
  checkWhole,
  invalidOption,
  refuseUnknownOptions,
  shown,
  type Timers,
} from '@tollgate/core/store'
import type { RedisScriptClient } from './client.js'
import type { Layout } from './prepare.js'

/**
 * Options of `redisStore`: the connection, the key prefix, whose clock decides, and how long a call
 * may take.
 * @example
 * redisStore({ client: ioredisClient(new Redis(process.env.REDIS_URL)), prefix: 'api', timeoutMs: 100 })
 */
export type RedisStoreOptions = {
  /** The Redis connection, through `ioredisClient(...)`, `nodeRedisClient(...)` or your own. */
  readonly client: RedisScriptClient
  /**
   * Starts every key, so several apps or environments can share one Redis. May not contain `{`
   * or `}` (they would change the Redis Cluster hash tag).
   * @default 'tg'
   */
  readonly prefix?: string
  /**
   * Whose clock decides. `'server'`: the Redis server's `TIME`, so gateway clocks that disagree
   * do not matter; `Outcome.at` reports it. `'caller'`: the `now` passed to `consume` (tests
   * inject time this way; gateways whose clocks are disciplined may prefer it).
   * @default 'server'
   */
  readonly time?: 'server' | 'caller'
  /**
   * The most a `consume` or `refund` may take, all round trips included, before it fails with
   * `ERR_RL_STORE_UNAVAILABLE` and the rule's failure policy decides. Raise it for a distant
   * Redis; lower it when a slow limiter hurts more than a skipped one.
   * @default 250
   */
  readonly timeoutMs?: number
  /**
   * Extra time each key is kept after its state would be fresh again. Keys expire on the Redis
   * server's clock; with `time: 'caller'` a caller clock running behind it would otherwise see
   * state vanish early (a fresh allowance a little too soon).
   * @default 0 with `time: 'server'`, 1000 with `time: 'caller'`
   */
  readonly expiryMarginMs?: number
  /**
   * A request whose rules have a call on its way to Redis waits for the end of the current turn
   * of the event loop, and goes with the others made meanwhile that charge the same rules: one
   * script call per set of rules, each request decided exactly as alone, so a busy gateway pays
   * the fixed cost of a call (for Redis and the client) once per batch. A request with nothing
   * of its rules on its way goes at once. `false` sends each request at once, on its own.
   * Always off on Redis Cluster.
   * @default true
   */
  readonly coalesce?: boolean
  /**
   * How long a concurrency slot is held without news from the process that took it: each slot
   * is a lease, renewed by this store while its request lasts (every third of the lease time)
   * and given back when the request ends. A process that dies renews nothing, so its slots come
   * back this long after its last renewal. At least 3 × `timeoutMs`, so that a renewal sent on
   * time arrives before the lease ends.
   * @default 10000, or 3 × `timeoutMs` if that is longer
   */
  readonly leaseMs?: number
  /**
   * Where states live. `'identity'`: one key per identity, `<prefix>:{<identity>}`, whose value
   * holds the states of every rule keyed on it, each with its own expiry: one read and one write
   * per request whatever its number of rules, and about half the memory of a key per rule.
   * Concurrency and sliding-log rules keep a key of their own (under the same hash tag: the
   * same slot). `'rule'`: a key per rule and identity, `<prefix>:<rule>:{<identity>}`. Changing
   * the layout starts every count afresh: the states are read under other keys.
   * @default 'identity'
   */
  readonly layout?: Layout
  /** What times the renewal of leases (the `time` option still decides when they end). @default `Date.now` */
  readonly clock?: Clock
  /** What arms the renewal timer (tests inject theirs). @default the runtime's, unreferenced */
  readonly timers?: Timers
  /**
   * What measures each call's `timeoutMs`: a clock (ms) and the timers that wake the store when
   * a call's time is up. Tests inject manual time (`manualTime()` of `@tollgate/test-utils`
   * fits) to make a call to a hung or absent Redis time out without waiting, and to keep a slow
   * machine from timing out a call that would answer. Apart from `clock` and `timers`, which
   * time the renewal of leases: a test may drive one and not the other.
   * @default `performance.now()` and the runtime's timers, unreferenced
   */
  readonly deadlines?: { readonly clock: Clock; readonly timers: Timers }
}

/** The default `timeoutMs`: how long a store call may take before it counts as failed. */
export const DEFAULT_TIMEOUT_MS = 250
/** The default `prefix` of every key the store writes (`tg:…`). */
export const DEFAULT_PREFIX = 'tg'
const DEFAULT_LEASE_MS = 10_000
/** A day: a lease is a crash's cost, renewed while its request lasts. */
const MAX_LEASE_MS = 86_400_000

/** Every option `redisStore` takes (the type makes sure none is left out); any other is refused. */
const OPTION_NAMES = Object.keys({
  client: true,
  prefix: true,
  time: true,
  timeoutMs: true,
  expiryMarginMs: true,
  coalesce: true,
  leaseMs: true,
  layout: true,
  clock: true,
  timers: true,
  deadlines: true,
} satisfies Record<keyof RedisStoreOptions, true>)

/** The options with their defaults filled in (`resolveOptions`). */
export type ResolvedOptions = ReturnType<typeof resolveOptions>

/**
 * The options with their defaults filled in, each checked: a mistyped name or a value out of
 * range is refused when the store is made, naming the field, never at the first request.
 */
export function resolveOptions(options: RedisStoreOptions) {
  refuseUnknownOptions(options, OPTION_NAMES, 'redisStore()')
  const client = checkMethods(
    'client',
    options.client as RedisScriptClient | undefined,
    ['evalsha', 'eval'],
    '{ evalsha, eval } (wrap your client with ioredisClient() or nodeRedisClient())',
    WHERE,
  )
  const prefix = options.prefix ?? DEFAULT_PREFIX
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw invalidOption('prefix', `expected a string without { or }, got ${shown(prefix)}`, WHERE)
  }
  const time = checkOneOf('time', options.time ?? 'server', ['server', 'caller'], WHERE)
  const timeoutMs = checkWhole(
    'timeoutMs',
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    { min: 1, unit: 'ms' },
    WHERE,
  )
  const margin = checkWhole(
    'expiryMarginMs',
    options.expiryMarginMs ?? (time === 'caller' ? 1000 : 0),
    { min: 0, unit: 'ms' },
    WHERE,
  )
  const coalesce = checkBoolean('coalesce', options.coalesce ?? true, WHERE)
  // A store with a long budget gets a lease long enough for it, rather than an error.
  const leaseMs = options.leaseMs ?? Math.max(DEFAULT_LEASE_MS, 3 * timeoutMs)
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 3 * timeoutMs || leaseMs > MAX_LEASE_MS) {
    throw invalidOption(
      'leaseMs',
      `expected a whole number of ms from 3 × timeoutMs (${3 * timeoutMs}) to ${MAX_LEASE_MS}, got ${shown(leaseMs)}`,
      WHERE,
    )
  }
  const layout = checkOneOf('layout', options.layout ?? 'identity', ['rule', 'identity'], WHERE)
  if (options.clock !== undefined) {
    checkMethods('clock', options.clock, ['now'], '{ now(): number }', WHERE)
  }
  if (options.timers !== undefined) {
    const shape = '{ setTimeout, clearTimeout }'
    checkMethods('timers', options.timers, ['setTimeout', 'clearTimeout'], shape, WHERE)
  }
  if (options.deadlines !== undefined) {
    const { clock, timers } = checkMethods(
      'deadlines',
      options.deadlines,
      [],
      '{ clock, timers }',
      WHERE,
    )
    checkMethods('deadlines.clock', clock, ['now'], '{ now(): number }', WHERE)
    const shape = '{ setTimeout, clearTimeout }'
    checkMethods('deadlines.timers', timers, ['setTimeout', 'clearTimeout'], shape, WHERE)
  }
  return {
    client,
    prefix,
    serverTime: time === 'server',
    timeoutMs,
    margin: String(margin),
    coalesce,
    leaseMs,
    layout: layout as Layout,
  }
}

/** Names the factory in each message: a Redis option could be mistaken for the limiter's. */
const WHERE = 'redisStore'
