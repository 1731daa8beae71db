import { ceilDiv } from './integer.js'
import type { Algorithm, AlgorithmName, StateSlots } from './types.js'

/**
 * What a key's state becomes when its rule keeps its id but changes its figures
 * (`limiter.update`): see docs/concepts/changing-rules-while-running.md.
 *
 * - `keep`: the amount used carries as it is, counted against the new allowance (above it, as
 *   debt the client waits out, up to one new allowance);
 * - `proportional`: the fraction of the allowance used carries;
 * - `reset`: the key starts fresh, with the whole new allowance;
 * - `additive`: the change in allowance is added to what remains (never below nothing left).
 */
export type CarryStrategy = 'keep' | 'proportional' | 'reset' | 'additive'

export const CARRY_STRATEGIES: readonly CarryStrategy[] = [
  'keep',
  'proportional',
  'reset',
  'additive',
]

/**
 * The strategy of a rule that declares none. Every counting algorithm keeps what was used (an
 * upgrade gives exactly the extra allowance, a downgrade takes away exactly the lost one); a
 * leaky queue's state is a schedule of admissions, not an amount used, so it starts afresh; a
 * concurrency rule's state is the requests in flight, which always carry.
 */
export const DEFAULT_CARRY: Readonly<Record<AlgorithmName, CarryStrategy>> = {
  token_bucket: 'keep',
  gcra: 'keep',
  leaky_bucket: 'keep',
  fixed_window: 'keep',
  sliding_window: 'keep',
  sliding_log: 'keep',
  leaky_queue: 'reset',
  concurrency: 'keep',
}

/**
 * How one algorithm's state reads as an amount used and is rebuilt from one. `used` is in the
 * algorithm's own units (`AlgorithmParams`: scaled units for a rate rule, requests for a window).
 */
export type UseForm = {
  /** What the state has used at `now`, 0 to (a little beyond, after a settle's debt) `full`. */
  usedAt(algorithm: Algorithm, slots: StateSlots, offset: number, now: number): number
  /** A state at `now` holding `used` (0 ≤ used ≤ 2 × full) of the algorithm's allowance. */
  withUse(algorithm: Algorithm, used: number, now: number): number[]
  /** The whole allowance in the algorithm's units, and how many make one request's unit. */
  full(algorithm: Algorithm): number
  perUnit(algorithm: Algorithm): number
}

/**
 * The amount used under the new rule, in its units, from `used` under the old one. Exact
 * integers: products beyond 2^53 go through bigint (this runs once per key and change).
 */
export function carriedUse(
  strategy: CarryStrategy,
  used: number,
  from: { full: number; perUnit: number },
  to: { full: number; perUnit: number },
): number {
  if (strategy === 'reset' || used <= 0) return 0
  if (strategy === 'proportional') return Math.min(to.full, scaledUp(used, to.full, from.full))
  const same = scaledUp(used, to.perUnit, from.perUnit)
  return Math.min(same, strategy === 'keep' ? 2 * to.full : to.full)
}

/** ceil(a × b / c) for whole a, b ≥ 0 and c > 0, exact. */
function scaledUp(a: number, b: number, c: number): number {
  const product = a * b
  if (Number.isSafeInteger(product)) return ceilDiv(product, c)
  const big = BigInt(a) * BigInt(b)
  return Number((big + BigInt(c) - 1n) / BigInt(c))
}
