// As it was before its code was shortened, for old-algorithms-differential.test.ts.
/**
 * Exact integer helpers. Every value the algorithms handle is a whole number below 2^53, so
 * doubles hold them exactly; only division needs care, because `a / b` is rounded before
 * `Math.floor` sees it and can land on the wrong side of a whole number near 2^53.
 */

/** floor(a / b) for safe integers a ≥ 0 (or small negatives) and b > 0, exact. */
export function floorDiv(a: number, b: number): number {
  // Rates that reduce to one unit per ms (100 per 60 s, 10 per s) divide by 1 on every decision.
  if (b === 1) return a
  let q = Math.floor(a / b)
  // The rounded quotient is off by at most one; step it back onto the exact value.
  if (q * b > a) q -= 1
  else if ((q + 1) * b <= a) q += 1
  return q
}

/** ceil(a / b) for safe integers and b > 0, exact. */
export function ceilDiv(a: number, b: number): number {
  return -floorDiv(-a, b)
}

export function greatestCommonDivisor(a: number, b: number): number {
  while (b !== 0) {
    const r = a % b
    a = b
    b = r
  }
  return a
}
