import { checkWhole } from '../options/option-values.js'

/** Keys a store holds at most (2^24 − 1, what a key table indexes): the memory and map stores. */
export const MAX_KEYS = 16_777_215

/** A store's `maxKeys` option, refused unless a whole number from 1 to `MAX_KEYS`. */
export function checkMaxKeys(maxKeys: number): number {
  return checkWhole('maxKeys', maxKeys, { min: 1, max: MAX_KEYS })
}
