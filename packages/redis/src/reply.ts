import { type Charge, type Decision, type Outcome, RateLimitError } from '@tollgate/core/store'

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
  /** Per charge, when asked (a consume call with ARGV[3] = 2): the time the state recorded it at. */
  readonly recordedAt?: readonly number[]
  /**
   * Per charge, when a concurrency load swept ended leases: the units it removed (at the first
   * charge on its key; 0 elsewhere). Absent when nothing was swept.
   */
  readonly swept?: readonly number[]
}

/**
 * Checks and reads a script reply `[now, (allowed, remaining, resetAfterMs) × charges, then the
 * retryAfterMs of each charge not allowed or delayMs of each allowed queue charge]` (see
 * scripts/main.lua.ts). Anything else (a proxy
 * that mangles replies, a foreign script under our SHA) is `ERR_RL_STORE_REPLY`, never a guess.
 *
 * `deniedBefore` is ARGV[3] of a consume call (another slot group already denied the request):
 * the script then writes nothing. Otherwise it committed unless an enforcing charge was denied
 * in its dry run (allowed = 0; a charge denied on commit, 2, means the request was committed).
 */
export function parseReply(
  reply: unknown,
  charges: readonly Charge[],
  deniedBefore = false,
  withRecordedTimes = false,
): ScriptReply {
  const count = charges.length
  if (!Array.isArray(reply) || reply.length < 1 + 3 * count) {
    throw malformed(`expected an array of at least ${1 + 3 * count} integers`, reply)
  }
  for (const value of reply) {
    if (!Number.isSafeInteger(value)) throw malformed('expected integers only', reply)
  }
  const numbers = reply as number[]
  const decisions: Decision[] = new Array(count)
  const deniedOnCommit: boolean[] = new Array(count)
  let committed = !deniedBefore
  let retryAt = 1 + 3 * count
  for (let i = 0; i < count; i++) {
    const base = 1 + 3 * i
    const allowed = numbers[base]
    if (allowed !== 0 && allowed !== 1 && allowed !== 2) {
      throw malformed('allowed must be 0, 1 or 2', reply)
    }
    deniedOnCommit[i] = allowed === 2
    if (allowed === 0 && !charges[i]!.shadow) committed = false
    const decision: Decision = {
      allowed: allowed === 1,
      remaining: numbers[base + 1]!,
      limit: charges[i]!.algorithm.limit,
      resetAfterMs: numbers[base + 2]!,
      retryAfterMs: allowed === 1 ? undefined : numbers[retryAt++],
    }
    decisions[i] =
      allowed === 1 && isQueue(charges[i]!)
        ? withDelay(decision, numbers[retryAt++], reply)
        : decision
  }
  const end = withRecordedTimes ? retryAt + count : retryAt
  // Then, only when a concurrency load swept ended leases, the units swept per charge.
  const swept = numbers.length === end + count && isSweep(numbers.slice(end), charges)
  if (end !== numbers.length && !swept) {
    throw malformed(`expected one retry time per charge not allowed, ${end} integers`, reply)
  }
  const at = numbers[0]!
  const parsed: ScriptReply = withRecordedTimes
    ? { at, committed, decisions, deniedOnCommit, recordedAt: numbers.slice(retryAt, end) }
    : { at, committed, decisions, deniedOnCommit }
  return swept ? { ...parsed, swept: numbers.slice(end) } : parsed
}

/** Units swept as the scripts send them: some, none negative, only at concurrency charges. */
function isSweep(units: readonly number[], charges: readonly Charge[]): boolean {
  let some = false
  for (let i = 0; i < units.length; i++) {
    const n = units[i]!
    if (n < 0 || (n > 0 && charges[i]!.algorithm.params?.kind !== 'concurrency')) return false
    if (n > 0) some = true
  }
  return some
}

/**
 * Reads a rule-set script's reply, `[now, then per request and rule: remaining (or
 * -1 - remaining when denied), resetAfterMs, then retryAfterMs when denied or a queue's delayMs
 * when allowed]` (scripts/rule-set.lua.ts), into one outcome per request, each with one
 * decision per rule. With the caller's clock each request keeps the time it was decided at.
 */
export function parseRuleSetReplies(
  reply: unknown,
  requests: readonly { readonly charges: readonly Charge[]; readonly now: number }[],
  rules: number,
  serverTime: boolean,
): Outcome[] {
  const count = requests.length
  if (!Array.isArray(reply) || reply.length < 1 + 2 * rules * count) {
    throw malformed(`expected an array of at least ${1 + 2 * rules * count} integers`, reply)
  }
  for (const value of reply) {
    if (!Number.isSafeInteger(value)) throw malformed('expected integers only', reply)
  }
  const numbers = reply as number[]
  const outcomes: Outcome[] = new Array(count)
  let at = 1
  for (let i = 0; i < count; i++) {
    const request = requests[i]!
    const decisions: Decision[] = new Array(rules)
    for (let j = 0; j < rules; j++) {
      const charge = request.charges[j]!
      const left = numbers[at]!
      const allowed = left >= 0
      const extra = !allowed || isQueue(charge)
      if (at + (extra ? 3 : 2) > numbers.length) {
        throw malformed('expected the retry time of a denied charge', reply)
      }
      const decision: Decision = {
        allowed,
        remaining: allowed ? left : -1 - left,
        limit: charge.algorithm.limit,
        resetAfterMs: numbers[at + 1]!,
        retryAfterMs: allowed ? undefined : numbers[at + 2],
      }
      decisions[j] = allowed && extra ? withDelay(decision, numbers[at + 2], reply) : decision
      at += extra ? 3 : 2
    }
    outcomes[i] = { decisions, at: serverTime ? numbers[0]! : request.now }
  }
  if (at !== numbers.length) throw malformed(`expected ${at} integers`, reply)
  return outcomes
}

/** What a renewal found of one lease (renew.lua.ts). */
export type Renewed = {
  /** Its units still held (now renewed). */
  readonly held: number
  /** Its units whose end had passed, removed by this renewal (a load sweeps the others). */
  readonly ended: number
}

/** Reads a renewal's reply: per lease, its units still held and those it found ended. */
export function parseRenewReply(reply: unknown, leases: number): readonly Renewed[] {
  if (
    !Array.isArray(reply) ||
    reply.length !== 2 * leases ||
    !reply.every((units) => Number.isSafeInteger(units) && units >= 0)
  ) {
    throw malformed(`expected ${leases} pairs of units held and ended`, reply)
  }
  const renewed: Renewed[] = new Array(leases)
  for (let i = 0; i < leases; i++) renewed[i] = { held: reply[2 * i], ended: reply[2 * i + 1] }
  return renewed
}

/** A queue's allowed charge replies its wait where a denied one replies its retry time. */
const isQueue = (charge: Charge) => charge.algorithm.name === 'leaky_queue'

/** The decision of an allowed queue charge with its `delayMs` (none for a cost-0 report: -1). */
function withDelay(decision: Decision, delayMs: number | undefined, reply: unknown): Decision {
  if (delayMs === undefined) throw malformed('expected the delay of an allowed queue charge', reply)
  return delayMs < 0 ? decision : { ...decision, delayMs }
}

/** Checks a settle script's reply: the number of charges it settled, all of those it was sent. */
export function parseSettleReply(reply: unknown, charges: number): void {
  if (reply !== charges) throw malformed(`expected the ${charges} charges settled`, reply)
}

export function malformed(what: string, reply: unknown): RateLimitError {
  let shown: string
  try {
    shown = JSON.stringify(reply)?.slice(0, 200) ?? String(reply)
  } catch {
    shown = String(reply)
  }
  return new RateLimitError('ERR_RL_STORE_REPLY', `unexpected script reply (${what}): ${shown}`)
}
