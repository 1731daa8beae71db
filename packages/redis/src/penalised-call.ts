import {
  type Charge,
  checkTime,
  type KeyRef,
  type KeyStatus,
  MAX_TIME_MS,
  type Offences,
  type PenalisedOutcome,
  type Penalty,
  RateLimitError,
  wholeMs,
} from '@tollgate/core/store'
import type { CallWatch, Deadline } from './call.js'
import type { RedisScriptClient } from './client.js'
import { consumeAcrossSlots, groupBySlot, type RunScript } from './cross-slot.js'
import type { LeaseBook } from './leases.js'
import { parseOperatorReply, parsePenalisedReply } from './penalty-reply.js'
import type { ChargePreparer, PreparedCharge } from './prepare.js'
import { type Runner, recordLeases } from './redis-calls.js'
import { checkOneAlgorithmPerKey, everyIndex, markNeverPassing } from './request-charges.js'
import { consumeScript, penaltiesScript } from './scripts/index.js'
import { PENALTY_MODES } from './scripts/penalties.lua.js'
import type { ResolvedOptions } from './store-options.js'

/** The Redis store's `consumePenalised` and operator methods (see `Store`), as promises. */
export type PenaltyCalls = {
  consumePenalised(charges: readonly Charge[], now: number): Promise<PenalisedOutcome>
  peek(ref: KeyRef, penalty: Penalty | undefined, now: number): Promise<KeyStatus>
  reset(ref: KeyRef, now: number): Promise<void>
  block(ref: KeyRef, penalty: Penalty, until: number, now: number): Promise<void>
  unblock(ref: KeyRef, now: number): Promise<void>
}

/** A charge ready for the penalties script: consume's arguments, and its offences' place. */
type PenalisedCharge = PreparedCharge & {
  readonly offencesKey: string
  /** [cost asked, block ms (-1: none), factor, max block ms, forget after ms, field, until]. */
  readonly penaltyArgs: readonly string[]
}

/**
 * Each call is one script call of the penalties script (scripts/penalties.lua.ts), which reads
 * and writes a key's offences beside its state: one round trip, as `consume`'s. On Redis Cluster
 * a request whose keys span slots is decided per slot group as `consume` decides it
 * (consumeAcrossSlots): each group reads its own offences, so a block in one group refuses the
 * request (the others' charges are given back) but does not stop another group from recording
 * an offence for its own rule's denial in the same request.
 */
export function penaltyCalls(
  config: ResolvedOptions,
  client: RedisScriptClient,
  preparer: ChargePreparer,
  runner: Runner,
  leases: LeaseBook,
  watch: CallWatch,
): PenaltyCalls {
  const { serverTime, timeoutMs, margin } = config

  function prepare(charge: Charge, prepared: PreparedCharge, until = 0): PenalisedCharge {
    const offences = preparer.offencesOf(charge, prepared.key)
    const penalty = charge.penalty
    if (penalty !== undefined) checkPenalty(charge.rule, penalty)
    const penaltyArgs =
      penalty === undefined
        ? [String(charge.cost), '-1', '0', '0', '0', String(offences.field), String(until)]
        : [
            String(charge.cost),
            String(penalty.blockMs),
            String(penalty.factor),
            String(penalty.maxBlockMs),
            String(penalty.forgetAfterMs),
            String(offences.field),
            String(until),
          ]
    return { ...prepared, offencesKey: offences.key, penaltyArgs }
  }

  /** One call of the penalties script over the charges at `indices`, in `mode`. */
  function call<T>(
    charges: readonly PenalisedCharge[],
    indices: readonly number[],
    now: number,
    mode: string,
    deadline: Deadline,
    read: (reply: unknown) => T,
  ): Promise<T> {
    const keys = indices.map((index) => charges[index]!.key)
    for (const index of indices) keys.push(charges[index]!.offencesKey)
    const args = [String(now), margin, mode]
    for (const index of indices) args.push(...charges[index]!.args)
    for (const index of indices) args.push(...charges[index]!.penaltyArgs)
    return watch.callScript(client, penaltiesScript, keys, args, deadline, read)
  }

  const nowSent = (now: number) => {
    if (serverTime) return -1
    now = wholeMs(now)
    checkTime(now)
    return now
  }

  /** An operator's call on one key: its charge at cost 0, with the penalty given. */
  function operate<T>(
    ref: KeyRef,
    penalty: Penalty | undefined,
    now: number,
    mode: string,
    read: (reply: unknown, charge: Charge) => T,
    until = 0,
  ): Promise<T> {
    try {
      const sent = nowSent(now)
      const charge: Charge = { ...ref, cost: 0, shadow: false, penalty }
      const prepared = [prepare(charge, preparer.prepare(charge, sent), until)]
      const deadline = watch.deadlineIn(timeoutMs)
      return call(prepared, [0], sent, mode, deadline, (reply) => read(reply, charge))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  return {
    async consumePenalised(charges, now) {
      const sent = nowSent(now)
      if (charges.length > 1) checkOneAlgorithmPerKey(charges)
      const marked = markNeverPassing(
        charges,
        charges.map((charge) => preparer.prepare(charge, sent)),
      )
      const prepared = marked.map((each, i) => prepare(charges[i]!, each))
      if (charges.length === 0) return { decisions: [], at: now, offences: [] }
      const deadline = watch.deadlineIn(timeoutMs)
      const offences: (Offences | undefined)[] = new Array(charges.length)
      let blocked = false
      // A consume call goes to the penalties script; a refund (giving back the groups that
      // wrote, in a request another group denied) goes as for consume.
      const refund = runner(charges, prepared, deadline)
      const run: RunScript = (script, indices, at, extra, free) => {
        if (script !== consumeScript) return refund(script, indices, at, extra, free)
        const covered = indices.map((index) => charges[index]!)
        return call(prepared, indices, at, extra, deadline, (reply) => {
          const parsed = parsePenalisedReply(reply, covered, extra === '1', extra === '2')
          indices.forEach((index, j) => {
            offences[index] = parsed.offences[j]
          })
          if (parsed.blocked) blocked = true
          const swept = parsed.swept ?? []
          for (let j = 0; j < swept.length; j++) leases.swept(covered[j]!.rule, swept[j]!)
          return parsed
        })
      }
      const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(charges.length)]
      const outcome =
        groups.length === 1
          ? await run(consumeScript, groups[0]!, sent, '0')
          : await consumeAcrossSlots(run, groups, charges.length, serverTime ? undefined : sent)
      // A blocked request wrote nothing, whatever its charges' reports say.
      if (!blocked) recordLeases(charges, prepared, outcome, leases)
      return { decisions: outcome.decisions, at: outcome.at, offences }
    },
    peek: (ref, penalty, now) =>
      operate(ref, penalty, now, PENALTY_MODES.peek, (reply, charge) => {
        const parsed = parsePenalisedReply(reply, [charge], false, false)
        // A concurrency key's load removes leases already ended, as any call on it does: told once.
        const swept = parsed.swept?.[0]
        if (swept !== undefined) leases.swept(charge.rule, swept)
        return { decision: parsed.decisions[0]!, offences: parsed.offences[0], at: parsed.at }
      }),
    reset: (ref, now) => operate(ref, undefined, now, PENALTY_MODES.reset, ignoreTime),
    block(ref, penalty, until, now) {
      try {
        until = wholeMs(until)
        checkTime(until)
      } catch (error) {
        return Promise.reject(error)
      }
      return operate(ref, penalty, now, PENALTY_MODES.block, ignoreTime, until)
    },
    unblock: (ref, now) => operate(ref, undefined, now, PENALTY_MODES.unblock, ignoreTime),
  }
}

const ignoreTime = (reply: unknown): void => {
  parseOperatorReply(reply)
}

/**
 * The script reads whole numbers, and multiplies a block by the factor only below the max: with
 * both bounded here every product stays below 2^53, exact. A penalty built by hand (not by the
 * limiter, which checks tighter bounds) is checked, naming the field.
 */
function checkPenalty(rule: string, penalty: Penalty): void {
  for (const [field, value, least, most] of [
    ['blockMs', penalty.blockMs, 1, MAX_TIME_MS],
    ['factor', penalty.factor, 1, 1000],
    ['maxBlockMs', penalty.maxBlockMs, 1, MAX_TIME_MS],
    ['forgetAfterMs', penalty.forgetAfterMs, 0, MAX_TIME_MS],
  ] as const) {
    if (Number.isSafeInteger(value) && value >= least && value <= most) continue
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `rule "${rule}": penalty.${field} must be a whole number from ${least} to ${most}, got ${value}`,
      { rule, field: `penalty.${field}` },
    )
  }
}
