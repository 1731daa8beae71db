/**
 * Exact integer helpers. Every value the algorithms handle is a whole number below 2^53, so
 * doubles hold them exactly. So is every quotient they round: for whole a, b with |a| < 2^53
 * and b > 0, `a / b` is within a·2^-53/b < 1/b of the exact quotient, which, when it is not
 * whole, is at least 1/b from every whole number, so `Math.floor` and `Math.ceil` of the
 * rounded quotient are those of the exact one.
 */

/** The largest time, in ms since the epoch, that the algorithms accept (2^42 ms: year 2109). */
export const MAX_TIME_MS = 2 ** 42

/**
 * The largest Integer an RFC 9651 structured field can carry. Limits, bursts and the counts a
 * decision reports stay at or below it, so that every one can be sent in a rate-limit field.
 */
export const MAX_FIELD_INTEGER = 999_999_999_999_999

/** floor(a / b) for safe integers a and b > 0, exact. */
export function floorDiv(a: number, b: number): number {
  return Math.floor(a / b)
}

/** ceil(a / b) for safe integers a and b > 0, exact. */
export function ceilDiv(a: number, b: number): number {
  return Math.ceil(a / b)
}

export function greatestCommonDivisor(a: number, b: number): number {
  return b === 0 ? a : greatestCommonDivisor(b, a % b)
}
