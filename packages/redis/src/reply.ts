import { type Charge, type Decision, RateLimitError } from '@tollgate/core'

/** A script's answer: the time it decided at, whether it wrote, one decision per charge. */
export type ScriptReply = {
  readonly at: number
  readonly committed: boolean
  readonly decisions: Decision[]
  /**
   * Per charge: denied on commit after passing the dry run (only when a request charges one key
   * twice). Such a charge wrote nothing, yet a denied request must report it at cost 0.
   */
  readonly deniedOnCommit: readonly boolean[]
}

/**
 * Checks and reads a script reply `[now, committed, (allowed, remaining, resetAfterMs,
 * retryAfterMs) × charges]` (see scripts/main.lua.ts). Anything else (a proxy that mangles replies, a foreign script under
 * our SHA) is `ERR_RL_STORE_REPLY`, never a guess.
 */
export function parseReply(reply: unknown, charges: readonly Charge[]): ScriptReply {
  if (!Array.isArray(reply) || reply.length !== 2 + 4 * charges.length) {
    throw malformed(`expected an array of ${2 + 4 * charges.length} integers`, reply)
  }
  for (const value of reply) {
    if (!Number.isSafeInteger(value)) throw malformed('expected integers only', reply)
  }
  const numbers = reply as number[]
  const decisions: Decision[] = new Array(charges.length)
  const deniedOnCommit: boolean[] = new Array(charges.length)
  for (let i = 0; i < charges.length; i++) {
    const base = 2 + 4 * i
    const allowed = numbers[base]
    if (allowed !== 0 && allowed !== 1 && allowed !== 2) {
      throw malformed('allowed must be 0, 1 or 2', reply)
    }
    deniedOnCommit[i] = allowed === 2
    decisions[i] = {
      allowed: allowed === 1,
      remaining: numbers[base + 1]!,
      limit: charges[i]!.algorithm.limit,
      resetAfterMs: numbers[base + 2]!,
      retryAfterMs: allowed === 1 ? undefined : numbers[base + 3]!,
    }
  }
  return { at: numbers[0]!, committed: numbers[1] === 1, decisions, deniedOnCommit }
}

function malformed(what: string, reply: unknown): RateLimitError {
  let shown: string
  try {
    shown = JSON.stringify(reply)?.slice(0, 200) ?? String(reply)
  } catch {
    shown = String(reply)
  }
  return new RateLimitError('ERR_RL_STORE_REPLY', `unexpected script reply (${what}): ${shown}`)
}
