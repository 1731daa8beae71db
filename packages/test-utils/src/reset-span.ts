import type { Algorithm } from '@tollgate/core'

/**
 * The longest a key waits on a steady clock: a rate rule's fill time (burst ÷ rate), one window
 * (a calendar window's longest), or two for the two-counter sliding window (its count weighs
 * until the end of the next window).
 * A clock step costs a key at most this on top of its own wait.
 */
export function resetSpanMs(algorithm: Algorithm): number {
  const params = algorithm.params!
  if (params.kind === 'rate') return Math.ceil(params.capacity / params.unitsPerMs)
  const twoCounters = algorithm.name === 'sliding_window' && params.buckets === undefined
  // A calendar window's policy length is its unit's mean: a 25-hour day or a 31-day month is
  // longer, by under a tenth.
  const window = params.calendar === undefined ? params.windowMs : Math.ceil(params.windowMs * 1.1)
  return twoCounters ? 2 * window : window
}
