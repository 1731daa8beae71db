import { type CarryStrategy, carriedUse, type UseForm } from './carried-use.js'
import { rateUse } from './rate-carry.js'
import type { Algorithm, StateSlots } from './types.js'
import { carryLog, windowUse } from './window-carry.js'

/** Rate algorithms convert into each other exactly (the same decisions on one amount used). */
function formOf(algorithm: Algorithm): { form: UseForm; family: string } | undefined {
  const kind = algorithm.params?.kind
  if (kind === 'rate' && algorithm.name !== 'leaky_queue') return { form: rateUse, family: kind }
  if (kind === 'window' && algorithm.name !== 'sliding_log') {
    return { form: windowUse, family: algorithm.name }
  }
  return undefined
}

/**
 * The state a key holding `slots[offset…]` under `from` carries into `to` at `now`, by
 * `strategy`; undefined when it starts fresh (a reset, or an algorithm changed into one with no
 * exact conversion: only the rate algorithms convert into each other). Pure: nothing is written.
 */
export function carryState(
  from: Algorithm,
  slots: StateSlots,
  offset: number,
  to: Algorithm,
  now: number,
  strategy: CarryStrategy,
): number[] | undefined {
  if (strategy === 'reset') return undefined
  if (from.name === 'concurrency' && to.name === 'concurrency') {
    // Requests in flight: each will give its slot back, whatever the new limit.
    return [slots[offset]!]
  }
  if (from.name === 'sliding_log' && to.name === 'sliding_log') {
    return carryLog(from, slots, offset, to, now, strategy)
  }
  const a = formOf(from)
  const b = formOf(to)
  if (a === undefined || b === undefined || a.family !== b.family) return undefined
  const used = a.form.usedAt(from, slots, offset, now)
  const carried = carriedUse(
    strategy,
    used,
    { full: a.form.full(from), perUnit: a.form.perUnit(from) },
    { full: b.form.full(to), perUnit: b.form.perUnit(to) },
  )
  return carried === 0 ? undefined : b.form.withUse(to, carried, now)
}
