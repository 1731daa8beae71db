import type { Algorithm } from '@tollgate/core'

/**
 * The longest a key waits on a steady clock: a rate rule's fill time (burst ÷ rate), one window,
 * or two for the sliding window counter (its count weighs until the end of the next window). A
 * clock step costs a key at most this on top of its own wait (a concurrency rule: nothing).
 */
export function resetSpanMs(algorithm: Algorithm): number {
  const params = algorithm.params!
  // Slots come back when requests end, not with time: a step of the clock costs nothing.
  if (params.kind === 'concurrency') return 0
  if (params.kind === 'rate') return Math.ceil(params.capacity / params.unitsPerMs)
  return algorithm.name === 'sliding_window' ? 2 * params.windowMs : params.windowMs
}
