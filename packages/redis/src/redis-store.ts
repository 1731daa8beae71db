import { randomInt } from 'node:crypto'
import {
  type Charge,
  type Clock,
  checkTime,
  type Outcome,
  RateLimitError,
  refuseUnknownOptions,
  type Store,
  systemClock,
  type Timers,
  wholeMs,
} from '@tollgate/core'
import type { StoreEvent } from '@tollgate/core/observe'
import { callScript, type Deadline, deadlineIn } from './call.js'
import type { RedisScriptClient } from './client.js'
import { requestSender } from './coalesce.js'
import { consumeAcrossSlots, groupBySlot, type RunScript } from './cross-slot.js'
import { encodeKey, redisKey } from './keys.js'
import { type HeldLease, leaseBook, leaseTimers } from './leases.js'
import { chargePreparer, type Layout, type PreparedCharge } from './prepare.js'
import { parseRenewReply, parseReply, type Renewed } from './reply.js'
import {
  ARGS_PER_CHARGE,
  consumeScript,
  refundScript,
  renewScript,
  type Script,
} from './scripts/index.js'

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
   * Where states live. `'rule'`: a key per rule and identity, `<prefix>:<rule>:{<identity>}`.
   * `'identity'`: one key per identity, `<prefix>:{<identity>}`, whose value holds the states
   * of every rule keyed on it, each with its own expiry: one read and one write per request
   * whatever its number of rules, and about half the memory. Concurrency and sliding-log rules
   * keep a key of their own (under the same hash tag: the same slot). Changing the layout
   * starts every count afresh: the states are read under other keys.
   * @default 'rule'
   */
  readonly layout?: Layout
  /** What times the renewal of leases (the `time` option still decides when they end). @default `Date.now` */
  readonly clock?: Clock
  /** What arms the renewal timer (tests inject theirs). @default the runtime's, unreferenced */
  readonly timers?: Timers
}

/** The Redis store: a `Store` whose calls are promises. */
export interface RedisStore extends Store {
  consume(charges: readonly Charge[], now: number): Promise<Outcome>
  refund(charges: readonly Charge[], chargedAt: number, now: number): Promise<void>
  /** Each call's budget (the `timeoutMs` option): the limiter sets no timer of its own. */
  readonly timeoutMs: number
  /**
   * The Redis key holding a rule's state for `key` (for inspection and tests). With
   * `layout: 'identity'`, the identity's key, which holds every rule's state but a concurrency
   * or sliding-log rule's (those keep `<prefix>:<rule>:{<identity>}`).
   */
  keyOf(rule: string, key: string): string
  /**
   * The scripts this store runs: the general consume and refund scripts, and the script of each
   * rule, and of each set of rules charged together, it has decided so far. For operators who
   * allow scripts by SHA; the store loads each one itself on first use.
   */
  scripts(): readonly Script[]
  /** How many scripts the store has sent by source for the first time (each is then cached). */
  readonly scriptLoads: number
  /**
   * How many times a script already sent was sent again because the server answered `NOSCRIPT`
   * (after a restart, a `SCRIPT FLUSH` or a failover to a replica that never saw it).
   */
  readonly scriptReloads: number
  /**
   * The concurrency leases this store holds (`held`), and how many renewals found a lease already
   * ended (`lost`: the process could not renew it in time, so its slot may have gone to another).
   */
  readonly leases: { readonly held: number; readonly lost: number }
  /**
   * Tells `listener` of the units of leases found ended (`concurrency.lease-expired`, by rule),
   * each once, by the call that removed it: a consume or refund whose load swept ended leases
   * (any process's: one that died holding them), or a renewal of this store (also at the release
   * of a lease whose renewal was due) that found its own ended but not yet swept. Units the key's
   * own expiry removes (nobody touched it for the expiry margin after its last lease ended) are
   * not told. `observedLimiter` calls it
   * (an `ObservableStore`), so that `tollgateMetrics()` counts `tollgate.concurrency.leases_expired`.
   */
  observe(listener: (event: StoreEvent) => void): void
}

export const DEFAULT_TIMEOUT_MS = 250
export const DEFAULT_PREFIX = 'tg'
const DEFAULT_LEASE_MS = 10_000
/** A day: a lease is a crash's cost, renewed while its request lasts. */
const MAX_LEASE_MS = 86_400_000

/**
 * Keeps rate-limit state in Redis, so that one limit holds across every process that shares it.
 * Every algorithm runs as a Lua script with the core's integer arithmetic; a request is one
 * script call (one round trip) whatever the number of rules, and is all-or-nothing: a denied
 * request consumes nothing from any rule. See docs/concepts/redis.md.
 * @example
 * const store = redisStore({ client: ioredisClient(new Redis()) })
 * const limiter = createLimiter({ rules, store })
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const resolved = resolveOptions(options)
  const { prefix, serverTime, timeoutMs, margin, coalesce, layout } = resolved
  // EVAL is only sent after NOSCRIPT (see callScript): a script's first time loads it, any
  // later one reloads it.
  const loaded = new Set<string>()
  let scriptReloads = 0
  const given = resolved.client
  const client: RedisScriptClient = {
    evalsha: (sha, keys, args) => given.evalsha(sha, keys, args),
    eval: (source, keys, args) => {
      if (loaded.has(source)) scriptReloads++
      else loaded.add(source)
      return given.eval(source, keys, args)
    },
    cluster: given.cluster,
    autoPipelining: given.autoPipelining,
  }
  const { leaseMs } = resolved
  // Rule-set scripts take requests keyed on several identities (keys of several slots).
  const multiKey = client.cluster !== true && layout === 'rule'
  // This process's name in the members of its leases: random, so that processes never clash.
  const owner = randomInt(2 ** 47)
  const preparer = chargePreparer(
    prefix,
    { serverTime, marginMs: Number(margin) },
    { leaseMs, owner },
    layout,
  )
  const prepare = preparer.prepare
  const leaseClock = options.clock ?? systemClock
  const leases = leaseBook({
    leaseMs,
    clock: leaseClock,
    timers: options.timers ?? leaseTimers,
    renew: renewLeases,
  })
  const send = requestSender({
    client,
    serverTime,
    timeoutMs,
    coalesce: coalesce && client.cluster !== true,
  })

  function runner(
    charges: readonly Charge[],
    prepared: readonly PreparedCharge[],
    deadline: Deadline,
  ): RunScript {
    return (script, indices, now, extra, free) => {
      const keys: string[] = new Array(indices.length)
      const args: string[] = new Array(3 + indices.length * ARGS_PER_CHARGE)
      args[0] = now === -1 ? '-1' : String(now)
      args[1] = margin
      args[2] = extra
      let at = 3
      for (let i = 0; i < indices.length; i++) {
        const index = indices[i]!
        const charge = prepared[index]!
        keys[i] = charge.key
        const chargeArgs = charge.args
        for (let j = 0; j < ARGS_PER_CHARGE; j++) args[at + j] = chargeArgs[j]!
        if (free?.has(index)) args[at + 1] = '0'
        at += ARGS_PER_CHARGE
      }
      // Most calls cover every charge in order: no need for a copy then.
      const covered =
        indices.length === charges.length ? charges : indices.map((index) => charges[index]!)
      return callScript(client, script, keys, args, deadline, (reply) => {
        const parsed = parseReply(
          reply,
          covered,
          script === consumeScript && extra === '1',
          script === consumeScript && extra === '2',
        )
        // Ended leases this call removed (any process's): counted here, once.
        const swept = parsed.swept
        if (swept !== undefined) {
          for (let i = 0; i < swept.length; i++) leases.swept(covered[i]!.rule, swept[i]!)
        }
        return parsed
      })
    }
  }

  return {
    timeoutMs,
    // Other processes decide in the same keys: see `Store.shared`.
    shared: true,
    get scriptLoads() {
      return loaded.size
    },
    get scriptReloads() {
      return scriptReloads
    },
    keyOf: (rule, key) =>
      layout === 'identity' ? `${prefix}:{${encodeKey(key)}}` : redisKey(prefix, rule, key),
    scripts: () => [consumeScript, refundScript, renewScript, ...preparer.ruleSetScripts()],
    leases: {
      get held() {
        return leases.held
      },
      get lost() {
        return leases.lost
      },
    },
    observe: (listener) => leases.observe(listener),

    consume(charges, now) {
      // Not an async function, to spare the common path a promise; errors still reject.
      try {
        if (!serverTime) {
          now = wholeMs(now)
          checkTime(now)
        }
        if (charges.length > 1) checkOneAlgorithmPerKey(charges)
        if (charges.length === 1) {
          const charge = charges[0]!
          const key = preparer.keyOf(charge)
          const script = preparer.oneRuleScript(charge)
          if (script !== undefined) return send(script, charges, key, now)
        } else if (charges.length > 1 && (multiKey || oneIdentity(charges))) {
          // On Redis Cluster the keys of one call must share a slot: they do when every charge
          // keys on the same identity (the hash tag); others go by slot through the general script.
          // A rule-set script of the identity layout reads one identity value: its requests key
          // on one identity, and their states differ when their rules do.
          const keys = charges.map(preparer.keyOf)
          const apart = layout === 'identity' ? distinctRules(charges) : distinct(keys)
          const script = apart ? preparer.ruleSetScript(charges) : undefined
          if (script !== undefined) {
            const sent = script.sent === undefined ? keys : keysSent(keys, script.sent)
            return send(script, charges, sent, now)
          }
        }
        return consumeMany(charges, now)
      } catch (error) {
        return Promise.reject(error)
      }
    },

    async refund(charges, chargedAt, now) {
      chargedAt = wholeMs(chargedAt)
      checkTime(chargedAt)
      if (!serverTime) {
        now = wholeMs(now)
        checkTime(now)
      }
      // A slot is given back by its lease: one this store does not hold (given back already, or
      // never taken here) gives nothing back.
      const given: Charge[] = []
      const prepared: PreparedCharge[] = []
      for (const charge of charges) {
        const key = preparer.keyOf(charge)
        let lease: HeldLease | undefined
        if (charge.algorithm.params?.kind === 'concurrency') {
          lease = leases.give(key, charge.cost, chargedAt)
          if (lease === undefined) continue
        }
        given.push(charge)
        prepared.push(prepare(charge, now, lease?.lease))
      }
      if (given.length === 0) return
      charges = given
      const run = runner(charges, prepared, deadlineIn(timeoutMs))
      const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(charges.length)]
      await Promise.all(
        groups.map((group) =>
          run(refundScript, group, serverTime ? -1 : now, refundTimes(charges, group, chargedAt)),
        ),
      )
    },
  }

  /** ARGV[3] of a refund: one time for all, or one per charge when a calendar window needs its own. */
  function refundTimes(charges: readonly Charge[], group: readonly number[], chargedAt: number) {
    const times = group.map((index) => preparer.refundTime(charges[index]!, chargedAt))
    return times.every((time) => time === chargedAt) ? String(chargedAt) : times.join(' ')
  }

  async function consumeMany(charges: readonly Charge[], now: number): Promise<Outcome> {
    const prepared = markNeverPassing(
      charges,
      charges.map((charge) => prepare(charge, now)),
    )
    // Nothing to decide, so nobody asks Redis the time: the caller's is reported.
    if (charges.length === 0) return { decisions: [], at: now }
    const run = runner(charges, prepared, deadlineIn(timeoutMs))
    const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(charges.length)]
    let outcome: Outcome
    if (groups.length === 1) {
      const reply = await run(consumeScript, groups[0]!, serverTime ? -1 : now, '0')
      outcome = { decisions: reply.decisions, at: reply.at }
    } else {
      outcome = await consumeAcrossSlots(run, groups, charges.length, serverTime ? undefined : now)
    }
    recordLeases(charges, prepared, outcome)
    return outcome
  }

  /** Books the leases of an admitted request (every enforcing charge allowed: all were written). */
  function recordLeases(
    charges: readonly Charge[],
    prepared: readonly PreparedCharge[],
    outcome: Outcome,
  ): void {
    const { decisions, at } = outcome
    for (let i = 0; i < charges.length; i++) {
      if (!decisions[i]!.allowed && !charges[i]!.shadow) return
    }
    for (let i = 0; i < charges.length; i++) {
      const { key, tag, lease } = prepared[i]!
      const cost = charges[i]!.cost
      if (lease === undefined || cost === 0 || !decisions[i]!.allowed) continue
      leases.took({ rule: charges[i]!.rule, key, tag, cost, lease, at })
    }
  }

  /** One renewal call per slot group (one on a single node), each lease's units held in reply. */
  async function renewLeases(held: readonly HeldLease[]): Promise<readonly Renewed[]> {
    const groups = client.cluster === true ? groupBySlot(held) : [everyIndex(held.length)]
    const now = serverTime ? '-1' : String(wholeMs(leaseClock.now()))
    const deadline = deadlineIn(timeoutMs)
    const units: Renewed[] = new Array(held.length)
    await Promise.all(
      groups.map(async (group) => {
        const keys = group.map((index) => held[index]!.key)
        const args = [now, margin, String(leaseMs)]
        for (const index of group) {
          const lease = held[index]!
          args.push(String(owner), String(lease.lease), String(lease.cost))
        }
        const reply = await callScript(client, renewScript, keys, args, deadline, (r) =>
          parseRenewReply(r, group.length),
        )
        group.forEach((index, j) => {
          units[index] = reply[j]!
        })
      }),
    )
    return units
  }
}

/**
 * A charge that, with the charges before it on the same key, exceeds the rule's limit can never
 * pass: it is sent with cost -1, which the script denies (the core's `applyCharges` does the
 * same), so that no script decides a cost beyond a limit.
 */
function markNeverPassing(
  charges: readonly Charge[],
  prepared: readonly PreparedCharge[],
): readonly PreparedCharge[] {
  if (charges.length < 2) return prepared
  let marked: PreparedCharge[] | undefined
  for (let i = 1; i < charges.length; i++) {
    let total = charges[i]!.cost
    for (let j = 0; j < i; j++) {
      if (prepared[j]!.place === prepared[i]!.place) total += charges[j]!.cost
    }
    if (total <= charges[i]!.algorithm.limit) continue
    marked ??= [...prepared]
    const args = [...prepared[i]!.args]
    args[1] = '-1'
    marked[i] = { ...prepared[i]!, args }
  }
  return marked ?? prepared
}

/**
 * Refuses a request that charges one rule and key with two different algorithms, whose states
 * would share a Redis key, as the core's stores refuse it.
 */
function checkOneAlgorithmPerKey(charges: readonly Charge[]): void {
  for (let i = 1; i < charges.length; i++) {
    for (let j = 0; j < i; j++) {
      const [a, b] = [charges[i]!, charges[j]!]
      if (a.rule !== b.rule || a.key !== b.key || a.algorithm === b.algorithm) continue
      if (sameParams(a, b)) continue
      throw new RateLimitError(
        'ERR_RL_INVALID_RULE',
        `rule ${a.rule} is charged with two different algorithms for one key in one request`,
        { rule: a.rule, field: 'algorithm' },
      )
    }
  }
}

/** Two algorithm objects that decide alike (one rule's algorithm built twice). */
function sameParams(a: Charge, b: Charge): boolean {
  return (
    a.algorithm.name === b.algorithm.name &&
    JSON.stringify(a.algorithm.params) === JSON.stringify(b.algorithm.params)
  )
}

/**
 * The keys a rule-set script is sent, by charge index (RuleSetScripts.sent): the identity's once
 * for all the rules its value holds. A loop, not `map`: no closure per request.
 */
function keysSent(keys: readonly string[], sent: readonly number[]): string[] {
  const out = new Array<string>(sent.length)
  for (let i = 0; i < sent.length; i++) out[i] = keys[sent[i]!]!
  return out
}

/** Every charge keys on the same identity, so their Redis keys share a hash tag and a slot. */
function oneIdentity(charges: readonly Charge[]): boolean {
  for (let i = 1; i < charges.length; i++) if (charges[i]!.key !== charges[0]!.key) return false
  return true
}

/** No key appears twice (a request that charges one key twice needs the general script). */
function distinct(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) {
    for (let j = 0; j < i; j++) if (keys[i] === keys[j]) return false
  }
  return true
}

/** No rule appears twice (in a request on one identity: no state is charged twice). */
function distinctRules(charges: readonly Charge[]): boolean {
  for (let i = 1; i < charges.length; i++) {
    for (let j = 0; j < i; j++) if (charges[i]!.rule === charges[j]!.rule) return false
  }
  return true
}

/** [0, 1, …, count − 1], shared for the usual small counts (never mutated). */
const SMALL_INDICES: readonly (readonly number[])[] = Array.from({ length: 8 }, (_, count) =>
  Array.from({ length: count }, (_, i) => i),
)

function everyIndex(count: number): readonly number[] {
  return SMALL_INDICES[count] ?? Array.from({ length: count }, (_, i) => i)
}

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
} satisfies Record<keyof RedisStoreOptions, true>)

function resolveOptions(options: RedisStoreOptions) {
  refuseUnknownOptions(options, OPTION_NAMES, 'redisStore()')
  const client = options.client as RedisScriptClient | undefined
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.evalsha !== 'function' ||
    typeof client.eval !== 'function'
  ) {
    throw invalidOption(
      'client',
      'expected { evalsha, eval }: wrap your client with ioredisClient() or nodeRedisClient()',
    )
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw invalidOption('prefix', `expected a string without { or }, got ${JSON.stringify(prefix)}`)
  }
  const time = options.time ?? 'server'
  if (time !== 'server' && time !== 'caller') {
    throw invalidOption('time', `expected 'server' or 'caller', got ${JSON.stringify(time)}`)
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw invalidOption('timeoutMs', `expected a whole number of ms ≥ 1, got ${timeoutMs}`)
  }
  const margin = options.expiryMarginMs ?? (time === 'caller' ? 1000 : 0)
  if (!Number.isSafeInteger(margin) || margin < 0) {
    throw invalidOption('expiryMarginMs', `expected a whole number of ms ≥ 0, got ${margin}`)
  }
  const coalesce = options.coalesce ?? true
  if (typeof coalesce !== 'boolean') {
    throw invalidOption('coalesce', `expected true or false, got ${JSON.stringify(coalesce)}`)
  }
  // A store with a long budget gets a lease long enough for it, rather than an error.
  const leaseMs = options.leaseMs ?? Math.max(DEFAULT_LEASE_MS, 3 * timeoutMs)
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 3 * timeoutMs || leaseMs > MAX_LEASE_MS) {
    throw invalidOption(
      'leaseMs',
      `expected a whole number of ms from 3 × timeoutMs (${3 * timeoutMs}) to ${MAX_LEASE_MS}, got ${leaseMs}`,
    )
  }
  const layout = options.layout ?? 'rule'
  if (layout !== 'rule' && layout !== 'identity') {
    throw invalidOption('layout', `expected 'rule' or 'identity', got ${JSON.stringify(layout)}`)
  }
  if (options.clock !== undefined && typeof options.clock?.now !== 'function') {
    throw invalidOption('clock', 'expected { now(): number }')
  }
  const timers = options.timers
  if (
    timers !== undefined &&
    (typeof timers?.setTimeout !== 'function' || typeof timers.clearTimeout !== 'function')
  ) {
    throw invalidOption('timers', 'expected { setTimeout, clearTimeout }')
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

function invalidOption(field: string, message: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `redisStore ${field}: ${message}`, { field })
}
