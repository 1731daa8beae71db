import type { Charge, Offences } from '@tollgate/core/store'
import { malformed, parseReply, type ScriptReply } from './reply.js'

/** The penalties script's answer: consume's, with the offences read or recorded. */
export type PenalisedReply = ScriptReply & {
  /** A block refused the request: nothing was written (`committed` is false). */
  readonly blocked: boolean
  /** Per charge: its offences, or undefined (none remembered, or no penalty). */
  readonly offences: (Offences | undefined)[]
}

/**
 * Reads a reply of the penalties script (scripts/penalties.lua.ts): consume's reply, then
 * whether a block refused the request (1/0), then per charge a count (-1: no offences) and the
 * time it is blocked until. Anything else is `ERR_RL_STORE_REPLY`.
 */
export function parsePenalisedReply(
  reply: unknown,
  charges: readonly Charge[],
  deniedBefore: boolean,
  withRecordedTimes: boolean,
): PenalisedReply {
  const tailLength = 1 + 2 * charges.length
  if (!Array.isArray(reply) || reply.length < tailLength) {
    throw malformed(`expected the offences of ${charges.length} charges at the end`, reply)
  }
  const tail = reply.slice(reply.length - tailLength) as unknown[]
  if (!tail.every((value) => Number.isSafeInteger(value))) {
    throw malformed('expected integers only', reply)
  }
  const numbers = tail as number[]
  if (numbers[0] !== 0 && numbers[0] !== 1) throw malformed('blocked must be 0 or 1', reply)
  const offences: (Offences | undefined)[] = new Array(charges.length)
  for (let i = 0; i < charges.length; i++) {
    const count = numbers[1 + 2 * i]!
    if (count < -1) throw malformed('an offence count must be -1 (none) or more', reply)
    offences[i] = count < 0 ? undefined : { count, blockedUntil: numbers[2 + 2 * i]! }
  }
  const head = parseReply(
    reply.slice(0, reply.length - tailLength),
    charges,
    deniedBefore,
    withRecordedTimes,
  )
  const blocked = numbers[0] === 1
  return { ...head, committed: head.committed && !blocked, blocked, offences }
}

/** Checks the reply of an operator's write (reset, block, unblock): the time it was made at. */
export function parseOperatorReply(reply: unknown): number {
  if (!Number.isSafeInteger(reply)) throw malformed('expected the time of the write', reply)
  return reply as number
}
