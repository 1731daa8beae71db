import { RateLimitError } from '../errors.js'
import type { Algorithm } from './types.js'

/**
 * How long after its reservation a request may be settled when its rule says `settle: true`:
 * ten minutes, longer than a streamed answer takes, short enough that a verdict kept by mistake
 * cannot rewrite a key's state long after.
 */
export const DEFAULT_SETTLE_WITHIN_MS = 600_000

/**
 * `algorithm` as a rule whose charges are settled needs it: the same arithmetic on its wide
 * state only. A settled state may be in debt (a token bucket below empty, a window above its
 * limit), which the 8-byte form (`PackedState`) cannot hold, so the memory store keeps such a
 * rule's keys in `stateSize` numbers. Throws `ERR_RL_INVALID_RULE` for an algorithm that cannot
 * settle (a leaky queue, a concurrency limit, one of an app's own without `settle`).
 */
export function reservable(algorithm: Algorithm): Algorithm {
  if (typeof algorithm.settle !== 'function') {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `${algorithm.name} charges cannot be settled (it has no settle method)`,
      { field: 'settle' },
    )
  }
  return algorithm.packed === undefined ? algorithm : { ...algorithm, packed: undefined }
}
