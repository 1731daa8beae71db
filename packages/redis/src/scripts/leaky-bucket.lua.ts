import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Leaky bucket as a meter (packages/core/src/algorithms/leaky-bucket.ts), line for line.
 * s = { water level in units, time of the last leak }, packed (packed-state.ts).
 */
const CODE = 3

export const leakyBucketLua: LuaAlgorithm = {
  name: 'leaky_bucket',
  kind: 'rate',
  code: CODE,
  load: `
    ${unpackState(CODE, ['a', 'b'])}
    if a then s = { a, b } else s = { 0, now } end`,
  decide: `
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local water = 0
    if elapsed < -floorDiv(-p3, p1) then water = max(0, s[1] - elapsed * p1) end
    local poured = water + cost * p2
    if cost > 0 and poured > p3 then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(p3 - water, p2)), skew - floorDiv(-water, p1), skew - floorDiv(p3 - poured, p1)
    else
      if commit then s[1] = poured; s[2] = at end
      reset = 0
      if poured ~= 0 then reset = skew - floorDiv(-poured, p1) end
      allowed, remaining, retry = 1, max(0, floorDiv(p3 - poured, p2)), 0
    end`,
  refund: `
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local water = 0
    if elapsed < -floorDiv(-p3, p1) then water = max(0, s[1] - elapsed * p1) end
    s[1] = max(0, water - cost * p2)
    s[2] = at`,
  freshAt: `
    fresh = s[2] - floorDiv(-s[1], p1)`,
  format: packState(CODE, 2),
}
