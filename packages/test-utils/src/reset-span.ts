import type { Algorithm } from '@tollgate/core'

/**
 * The longest a key waits on a steady clock: a rate rule's fill time (burst ÷ rate), one window
 * (a calendar window's longest), or two for the two-counter sliding window (its count weighs
 * until the end of the next window). A clock step costs a key at most this on top of its own
 * wait (a concurrency rule: nothing).
 */
export function resetSpanMs(algorithm: Algorithm): number {
  const params = algorithm.params!
  // Slots come back when requests end, not with time: a step of the clock costs nothing.
  if (params.kind === 'concurrency') return 0
  if (params.kind === 'rate') return Math.ceil(params.capacity / params.unitsPerMs)
  const twoCounters = algorithm.name === 'sliding_window' && params.buckets === undefined
  // A calendar window's policy length is its unit's mean: a 25-hour day or a 31-day month is
  // longer, by under a tenth.
  const window = params.calendar === undefined ? params.windowMs : Math.ceil(params.windowMs * 1.1)
  return twoCounters ? 2 * window : window
}
