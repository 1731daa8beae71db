import { type Charge, type Clock, checkTime, type Outcome, wholeMs } from '@tollgate/core/store'
import type { CallWatch, Deadline } from './call.js'
import type { RedisScriptClient } from './client.js'
import type { RequestSender } from './coalesce.js'
import { consumeAcrossSlots, groupBySlot, type RunScript } from './cross-slot.js'
import type { HeldLease, LeaseBook } from './leases.js'
import type { ChargePreparer, PreparedCharge } from './prepare.js'
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
import { ARGS_PER_CHARGE, consumeScript, refundScript, renewScript } from './scripts/index.js'
import type { ResolvedOptions } from './store-options.js'

// What the Redis store sends: each of its calls as script calls, built once per store.

type Consume = (charges: readonly Charge[], now: number) => Promise<Outcome>
type Refund = (charges: readonly Charge[], chargedAt: number, now: number) => Promise<void>

/**
 * A script call over some of a request's charges (`RunScript`), for the charges and deadline of
 * one store call. The ended leases a reply reports swept are told, once, here.
 */
export type Runner = (
  charges: readonly Charge[],
  prepared: readonly PreparedCharge[],
  deadline: Deadline,
) => RunScript

export function scriptRunner(
  client: RedisScriptClient,
  margin: string,
  leases: LeaseBook,
  watch: CallWatch,
): Runner {
  return (charges, prepared, deadline) => (script, indices, now, extra, free) => {
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
    return watch.callScript(client, script, keys, args, deadline, (reply) => {
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

/**
 * `RedisStore.consume`: a request of one rule, or of several rules a rule-set script decides
 * together, goes to its rule set's script (through `send`, which may batch it); any other
 * request to the general script (`consumeMany`).
 */
export function consumer(
  config: ResolvedOptions,
  client: RedisScriptClient,
  preparer: ChargePreparer,
  send: RequestSender,
  consumeMany: Consume,
): Consume {
  const { serverTime, layout } = config
  // Rule-set scripts take requests keyed on several identities (keys of several slots).
  const multiKey = client.cluster !== true && layout === 'rule'
  // Not an async function, to spare the common path a promise; errors still reject.
  return (charges, now) => {
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
  }
}

/**
 * A request through the general consume script: one call on a single node, one per slot group
 * on Redis Cluster (all-or-nothing across them: see consumeAcrossSlots). The leases of an
 * admitted request are booked.
 */
export function generalConsumer(
  config: ResolvedOptions,
  client: RedisScriptClient,
  prepare: ChargePreparer['prepare'],
  runner: Runner,
  leases: LeaseBook,
  watch: CallWatch,
): Consume {
  const { serverTime, timeoutMs } = config
  return async (charges, now) => {
    const prepared = markNeverPassing(
      charges,
      charges.map((charge) => prepare(charge, now)),
    )
    // Nothing to decide, so nobody asks Redis the time: the caller's is reported.
    if (charges.length === 0) return { decisions: [], at: now }
    const run = runner(charges, prepared, watch.deadlineIn(timeoutMs))
    const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(charges.length)]
    let outcome: Outcome
    if (groups.length === 1) {
      const reply = await run(consumeScript, groups[0]!, serverTime ? -1 : now, '0')
      outcome = { decisions: reply.decisions, at: reply.at }
    } else {
      outcome = await consumeAcrossSlots(run, groups, charges.length, serverTime ? undefined : now)
    }
    recordLeases(charges, prepared, outcome, leases)
    return outcome
  }
}

/** Books the leases of an admitted request (every enforcing charge allowed: all were written). */
export function recordLeases(
  charges: readonly Charge[],
  prepared: readonly PreparedCharge[],
  outcome: Outcome,
  leases: LeaseBook,
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

/** `RedisStore.refund`: the charges given back through the refund script, by slot group. */
export function refunder(
  config: ResolvedOptions,
  client: RedisScriptClient,
  preparer: ChargePreparer,
  runner: Runner,
  leases: LeaseBook,
  watch: CallWatch,
): Refund {
  const { serverTime, timeoutMs } = config
  return async (charges, chargedAt, now) => {
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
      prepared.push(preparer.prepare(charge, now, lease?.lease))
    }
    if (given.length === 0) return
    charges = given
    const run = runner(charges, prepared, watch.deadlineIn(timeoutMs))
    const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(charges.length)]
    await Promise.all(
      groups.map((group) =>
        run(
          refundScript,
          group,
          serverTime ? -1 : now,
          chargeTimes(preparer, charges, group, chargedAt),
        ),
      ),
    )
  }
}

/**
 * ARGV[3] of a refund or settle: one time for all, or one per charge when a calendar window
 * needs its own.
 */
export function chargeTimes(
  preparer: ChargePreparer,
  charges: readonly Charge[],
  group: readonly number[],
  chargedAt: number,
) {
  const times = group.map((index) => preparer.refundTime(charges[index]!, chargedAt))
  return times.every((time) => time === chargedAt) ? String(chargedAt) : times.join(' ')
}

/**
 * The lease book's renewal: one call per slot group (one on a single node), each lease's units
 * held in reply.
 */
export function renewer(
  config: ResolvedOptions,
  client: RedisScriptClient,
  owner: number,
  clock: Clock,
  watch: CallWatch,
): (held: readonly HeldLease[]) => Promise<readonly Renewed[]> {
  const { serverTime, timeoutMs, margin, leaseMs } = config
  return async (held) => {
    const groups = client.cluster === true ? groupBySlot(held) : [everyIndex(held.length)]
    const now = serverTime ? '-1' : String(wholeMs(clock.now()))
    const deadline = watch.deadlineIn(timeoutMs)
    const units: Renewed[] = new Array(held.length)
    await Promise.all(
      groups.map(async (group) => {
        const keys = group.map((index) => held[index]!.key)
        const args = [now, margin, String(leaseMs)]
        for (const index of group) {
          const lease = held[index]!
          args.push(String(owner), String(lease.lease), String(lease.cost))
        }
        const reply = await watch.callScript(client, renewScript, keys, args, deadline, (r) =>
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
