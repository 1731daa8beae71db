import type { AlgorithmName } from '@tollgate/core'

/**
 * One algorithm's Lua, as fragments that `assemble.ts` places into a few shared functions.
 *
 * Why fragments and not one Lua function per algorithm: Redis runs a script's whole chunk on
 * every call, and each `local function` is a closure created anew each time (about 0.1 µs with
 * its upvalues and garbage). Dozens of small functions cost more than the arithmetic; a handful
 * of functions that branch on the algorithm code keep a call to a few µs.
 *
 * Names in scope for every fragment:
 * - `s`: the key's state, a table holding the core's slot numbers in order (`s[1]`, `s[2]`, …),
 *   and `key` (the Redis key) and `code` (the algorithm code) beside it;
 * - the algorithm's parameters by their core names (`PARAMETER_NAMES`): rate algorithms read
 *   `unitsPerMs`, `unitsPerToken` and `capacity`, window algorithms `limit` and `windowMs`;
 * - `cost`, `now`, `commit`, `chargedAt`, and a settle's `charged` and `actual`, where the
 *   function has them;
 * - helpers `floorDiv(a, b)` (exact), `-floorDiv(-a, b)` for ceilDiv, and `now - now % w` is
 *   never used: `mod(a, b)` is spelt `a - floorDiv(a, b) * b`, exact where `%` is not.
 */
export type LuaAlgorithm = {
  /** The core algorithm this mirrors. */
  readonly name: AlgorithmName
  /** Which `AlgorithmParams` it takes. */
  readonly kind: 'rate' | 'window' | 'concurrency'
  /**
   * Its own names for the five parameter slots, where they differ from its kind's
   * (PARAMETER_NAMES): a window algorithm with an option in the third, the queue's delay and
   * longest wait in the fourth and fifth.
   */
  readonly parameters?: readonly string[]
  /** The code the client sends for this algorithm. */
  readonly code: number
  /**
   * Statements that build `s` from `v` (the string stored under the key, or nil) or, when `v`
   * is nil or does not parse, the state of a key never seen: the core's `init` at `now`.
   * (`v` is the raw GET reply for the sliding log, whose long form is a list.) A state further
   * ahead of `now` than a steady clock allows (the clock stepped back more than the rule's reset
   * span) is moved to `now` as the core's `decide` moves it, and `moved` set to true: the caller
   * then writes it back whatever the decision. `read`: for a packed state (packed-state.ts),
   * the names of locals that already hold its slots (unpacked with the identity value's entry,
   * the first nil when there is no state), read in place of `v`.
   */
  readonly load: (read?: readonly string[]) => string
  /**
   * Statements that set `allowed` (1/0), `remaining`, `reset` (resetAfterMs) and `retry`
   * (retryAfterMs), and change `s` only when `commit` is true and the charge is allowed. They
   * assign and never `return`, so that the rule-set scripts can run them inline, without a
   * function around them (see rule-set.lua.ts).
   */
  readonly decide: string
  /** Statements giving back `cost` charged at `chargedAt`, as of `now`. */
  readonly refund: string
  /**
   * Statements replacing `charged` units charged at `chargedAt` with `actual` (≠ `charged`), as
   * of `now`: the core's `settle`, after `load` moved a state the clock stepped back from.
   * Absent for an algorithm whose charges cannot be settled (the queue's slot, a concurrency
   * slot): the store refuses those before it calls.
   */
  readonly settle?: string
  /** Statements that set `fresh`: the time from which the state is fresh again. */
  readonly freshAt: string
  /**
   * An expression: the string to store, or false for a sliding log kept as a list (written in
   * place by `decide`; only its expiry is set).
   */
  readonly format: string
}

/**
 * The names the fragments read an algorithm's scaled parameters by, in the order the scripts
 * receive them (ARGV, or the constants of a rule-set script): the core's `AlgorithmParams`.
 */
const PARAMETER_NAMES = {
  rate: ['unitsPerMs', 'unitsPerToken', 'capacity'],
  window: ['limit', 'windowMs'],
  concurrency: ['limit'],
} as const

/**
 * A Lua statement binding `algorithm`'s parameter names to `values` (Lua expressions, in the
 * order of PARAMETER_NAMES; slots past an algorithm's names are ignored), and for a rate
 * algorithm the constants its fragments read besides (RATE_CONSTANTS).
 */
export function bindParameters(algorithm: LuaAlgorithm, values: readonly string[]): string {
  const names = algorithm.parameters ?? PARAMETER_NAMES[algorithm.kind]
  const bound = `local ${names.join(', ')} = ${values.slice(0, names.length).join(', ')}`
  return algorithm.kind === 'rate' ? `${bound}\n${rateConstants(values)}` : bound
}

/**
 * `fillMs`: the time an empty bucket takes to fill (ceil(capacity / unitsPerMs)); `fullMs`: the
 * time after which a bucket is full (a meter empty) even from the one burst of debt a settle may
 * leave (ceil(2 × capacity / unitsPerMs), the core's `fullMs` and `emptyMs`); `split`: whether
 * GCRA keeps its TAT as two numbers, when ticks since the epoch could pass 2^53 (the core's
 * `fitsInTicks`, in the same doubles: a sum past 2^53 stays past it when rounded). A rule-set
 * script has its parameters as literal numbers: both are worked out here, exactly (BigInt
 * division; the same double arithmetic as Lua's), so a call spends no division on them. The
 * general script reads them from ARGV: there they are Lua expressions.
 */
function rateConstants(values: readonly string[]): string {
  const [unitsPerMs, , capacity] = values
  if (!isInteger(unitsPerMs) || !isInteger(capacity)) {
    return `local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)`
  }
  const units = Number(unitsPerMs)
  const fill = -floorDivBig(-BigInt(capacity), BigInt(unitsPerMs))
  const full = -floorDivBig(-2n * BigInt(capacity), BigInt(unitsPerMs))
  const split = splitTicks(units, Number(capacity))
  return `local fillMs, fullMs, split = ${fill}, ${full}, ${split}`
}

/** Whether GCRA keeps its TAT as two numbers at this rate (the core's `fitsInTicks`, negated). */
export const splitTicks = (unitsPerMs: number, capacity: number) =>
  (4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991

const isInteger = (text: string | undefined): text is string =>
  text !== undefined && /^-?\d+$/.test(text)

/** floor(a / b) for integers of any size (BigInt `/` truncates toward zero). */
function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}
