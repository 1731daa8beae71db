import { randomInt } from 'node:crypto'
import { systemClock } from '@tollgate/core'
import type { StoreEvent } from '@tollgate/core/observe'
import { type Charge, checkTime, type Outcome, type Store, wholeMs } from '@tollgate/core/store'
import { callWatch, type Deadline, systemCallWatch } from './call.js'
import type { RedisScriptClient } from './client.js'
import { requestSender } from './coalesce.js'
import { consumeAcrossSlots, groupBySlot, type RunScript } from './cross-slot.js'
import { encodeKey, redisKey } from './keys.js'
import { type HeldLease, leaseBook, leaseTimers } from './leases.js'
import { chargePreparer, type PreparedCharge } from './prepare.js'
import { parseRenewReply, parseReply, type Renewed } from './reply.js'
import {
  checkOneAlgorithmPerKey,
  distinct,
  distinctRules,
  everyIndex,
  keysSent,
  markNeverPassing,
  oneIdentity,
} from './request-charges.js'
import {
  ARGS_PER_CHARGE,
  consumeScript,
  refundScript,
  renewScript,
  type Script,
} from './scripts/index.js'
import { type RedisStoreOptions, resolveOptions } from './store-options.js'

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
  const watch = options.deadlines === undefined ? systemCallWatch : callWatch(options.deadlines)
  const { callScript, deadlineIn } = watch
  const send = requestSender({
    client,
    serverTime,
    timeoutMs,
    coalesce: coalesce && client.cluster !== true,
    watch,
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
          const keys = preparer.keysOf(charges)
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
