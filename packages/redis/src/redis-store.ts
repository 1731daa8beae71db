import { randomInt } from 'node:crypto'
import type { CarryStrategy } from '@tollgate/core'
import { systemClock } from '@tollgate/core'
import type { StoreEvent } from '@tollgate/core/observe'
import type {
  Algorithm,
  Charge,
  FiguresCarry,
  KeyRef,
  KeyStatus,
  Outcome,
  PenalisedOutcome,
  Penalty,
  RuleChange,
  Settlement,
  Store,
} from '@tollgate/core/store'
import type { Versioned } from './algorithm-plans.js'
import { callWatch, systemCallWatch } from './call.js'
import type { RedisScriptClient } from './client.js'
import { requestSender } from './coalesce.js'
import { encodeKey, redisKey } from './keys.js'
import { leaseBook, leaseTimers } from './leases.js'
import { penaltyCalls } from './penalised-call.js'
import { chargePreparer } from './prepare.js'
import { consumer, generalConsumer, refunder, renewer, scriptRunner } from './redis-calls.js'
import { checkFiguredRule, checkRuleChanges } from './rule-changes.js'
import {
  consumeScript,
  penaltiesScript,
  refundScript,
  renewScript,
  type Script,
  settleScript,
} from './scripts/index.js'
import { settler } from './settle-call.js'
import { type RedisStoreOptions, resolveOptions } from './store-options.js'

/** The Redis store: a `Store` whose calls are promises. */
export interface RedisStore extends Store {
  /**
   * Decides a request's charges in one script call (one per hash slot on a cluster), on Redis's
   * clock unless `time: 'caller'`.
   */
  consume(charges: readonly Charge[], now: number): Promise<Outcome>
  refund(charges: readonly Charge[], chargedAt: number, now: number): Promise<void>
  /**
   * Replaces reservations' estimates with what the requests really cost, in one script call
   * (one per slot group on Redis Cluster), as the core's algorithms settle them; with the
   * server's clock, `chargedAt` is the `Outcome.at` its consume answered (the server's time).
   */
  settle(settlements: readonly Settlement[], chargedAt: number, now: number): Promise<void>
  /**
   * `consume` with penalties in the same script call: a key's offences live beside its state
   * (the identity value's own entry, or `<state key>:offences` in the rule layout) and are
   * forgotten `forgetAfterMs` after the block ends (scripts/penalties.lua.ts).
   */
  consumePenalised(charges: readonly Charge[], now: number): Promise<PenalisedOutcome>
  /**
   * A look at cost 0 and the key's offences, in one call that writes nothing but a state it
   * carried into a rule's new figures (as a charge would have).
   */
  peek(ref: KeyRef, penalty: Penalty | undefined, now: number): Promise<KeyStatus>
  /** Drops the key's state and its offences under the rule, in one call. */
  reset(ref: KeyRef, now: number): Promise<void>
  /** Blocks the key under the rule until `until`, its count kept, in one call. */
  block(ref: KeyRef, penalty: Penalty, until: number, now: number): Promise<void>
  /** Lifts the key's block and forgets its offences under the rule, in one call. */
  unblock(ref: KeyRef, now: number): Promise<void>
  /**
   * Rules changed while running: checks that each change can carry (a rule that declares a
   * `version`, raised with its figures), and writes nothing; each key is carried by the scripts
   * when it is next charged, as its state keeps the version and figures it was written under.
   * Rejects, naming the rule and field, a change it cannot carry (rule-changes.ts).
   */
  updateRules(
    changes: readonly RuleChange[],
    removed: readonly string[],
    now: number,
  ): Promise<void>
  /**
   * Per-client figures (the limiter's `figures` option): every key of `rule` keeps, beside its
   * state, the version (the rule's, or 0 without one) and figures it was written under, and a
   * request whose figures differ carries it by `onChange` in the same call, as a changed rule's
   * key is carried. Throws, naming the rule, for an algorithm whose states do not carry on Redis.
   */
  carryFigures(
    rule: string,
    carry: FiguresCarry,
    own: Algorithm,
    onChange: CarryStrategy | undefined,
  ): void
  /** Each call's budget (the `timeoutMs` option): the limiter sets no timer of its own. */
  readonly timeoutMs: number
  /**
   * The Redis key holding a rule's state for `key` (for inspection and tests). With
   * `layout: 'identity'`, the identity's key, which holds every rule's state but a concurrency
   * or sliding-log rule's (those keep `<prefix>:<rule>:{<identity>}`).
   */
  keyOf(rule: string, key: string): string
  /**
   * The scripts this store runs: the general consume, refund, settle and penalties scripts, and the script
   * of each rule, and of each set of rules charged together, it has decided so far. For
   * operators who allow scripts by SHA; the store loads each one itself on first use.
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
  const config = resolveOptions(options)
  const { prefix, serverTime, timeoutMs, margin, leaseMs, layout } = config
  const loads: ScriptLoads = { sources: new Set(), reloads: 0 }
  const client = countingLoads(config.client, loads)
  // This process's name in the members of its leases: random, so that processes never clash.
  const owner = randomInt(2 ** 47)
  // Rules with per-client figures, and the version their keys' figures are kept under.
  const figured = new Map<string, Versioned>()
  const preparer = chargePreparer(
    prefix,
    { serverTime, marginMs: Number(margin) },
    { leaseMs, owner },
    layout,
    figured,
  )
  // What each call's timeoutMs is measured on: the runtime's time, or a test's.
  const watch = options.deadlines === undefined ? systemCallWatch : callWatch(options.deadlines)
  const leaseClock = options.clock ?? systemClock
  const leases = leaseBook({
    leaseMs,
    clock: leaseClock,
    timers: options.timers ?? leaseTimers,
    renew: renewer(config, client, owner, leaseClock, watch),
  })
  const runner = scriptRunner(client, margin, leases, watch)
  const send = requestSender({
    client,
    serverTime,
    timeoutMs,
    coalesce: config.coalesce && client.cluster !== true,
    watch,
  })
  const consumeMany = generalConsumer(config, client, preparer.prepare, runner, leases, watch)

  return {
    timeoutMs,
    // Other processes decide in the same keys: see `Store.shared`.
    shared: true,
    get scriptLoads() {
      return loads.sources.size
    },
    get scriptReloads() {
      return loads.reloads
    },
    keyOf: (rule, key) =>
      layout === 'identity' ? `${prefix}:{${encodeKey(key)}}` : redisKey(prefix, rule, key),
    scripts: () => [
      consumeScript,
      refundScript,
      settleScript,
      renewScript,
      penaltiesScript,
      ...preparer.ruleSetScripts(),
    ],
    leases: {
      get held() {
        return leases.held
      },
      get lost() {
        return leases.lost
      },
    },
    observe: (listener) => leases.observe(listener),
    consume: consumer(config, client, preparer, send, consumeMany),
    refund: refunder(config, client, preparer, runner, leases, watch),
    settle: settler(config, client, preparer, watch),
    ...penaltyCalls(config, client, preparer, runner, leases, watch),
    updateRules: async (changes) => {
      await checkRuleChanges(changes, layout === 'identity')
      // A rule with per-client figures changed to a new version: its clients' figures are kept
      // under it from now on (the figures a lookup gives carry none of their own).
      for (const { rule, to } of changes) if (figured.has(rule)) figured.set(rule, to.versioned!)
    },
    carryFigures(rule, _carry, own, onChange) {
      // The scripts carry (carry.lua.ts): the core's `carry` is for stores that carry in-process.
      // Under the rule's version, or 0 for a rule without one: the lowest, so that a version
      // declared later is newer than every state written before it.
      const versioned = own.versioned ?? { version: 0, onChange }
      checkFiguredRule(rule, { ...own, versioned }, layout === 'identity')
      figured.set(rule, versioned)
    },
  }
}

/** The scripts a store has sent by source, and how many it sent again after `NOSCRIPT`. */
type ScriptLoads = { readonly sources: Set<string>; reloads: number }

/**
 * The client, counting in `loads` the scripts it sends by source. EVAL is only sent after
 * NOSCRIPT (see callScript): a script's first time loads it, any later one reloads it.
 */
function countingLoads(given: RedisScriptClient, loads: ScriptLoads): RedisScriptClient {
  return {
    evalsha: (sha, keys, args) => given.evalsha(sha, keys, args),
    eval: (source, keys, args) => {
      if (loads.sources.has(source)) loads.reloads++
      else loads.sources.add(source)
      return given.eval(source, keys, args)
    },
    cluster: given.cluster,
    autoPipelining: given.autoPipelining,
  }
}
