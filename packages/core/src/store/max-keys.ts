import { RateLimitError } from '../errors.js'

/** Keys a store holds at most (2^24 − 1, what a key table indexes): the memory and map stores. */
export const MAX_KEYS = 16_777_215

/** A store's `maxKeys` option, refused unless a whole number from 1 to `MAX_KEYS`. */
export function checkMaxKeys(maxKeys: number): number {
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_KEYS) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `maxKeys must be a whole number from 1 to ${MAX_KEYS}, got ${maxKeys}`,
      { field: 'maxKeys' },
    )
  }
  return maxKeys
}
