import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Token bucket (packages/core/src/algorithms/token-bucket.ts), line for line.
 * s = { level in units, time of the last refill }, packed (packed-state.ts).
 */
const CODE = 1

export const tokenBucketLua: LuaAlgorithm = {
  name: 'token_bucket',
  kind: 'rate',
  code: CODE,
  load: `
    ${unpackState(CODE, ['a', 'b'])}
    if a then s = { a, b } else s = { p3, now } end`,
  decide: `
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local level = p3
    if elapsed < -floorDiv(-p3, p1) then level = min(p3, s[1] + elapsed * p1) end
    local need = cost * p2
    if level < need then
      allowed, remaining, reset, retry = 0, floorDiv(level, p2), skew - floorDiv(level - p3, p1), skew - floorDiv(level - need, p1)
    else
      local left = level - need
      if commit then s[1] = left; s[2] = at end
      reset = 0
      if left ~= p3 then reset = skew - floorDiv(left - p3, p1) end
      allowed, remaining, retry = 1, floorDiv(left, p2), 0
    end`,
  refund: `
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local level = p3
    if elapsed < -floorDiv(-p3, p1) then level = min(p3, s[1] + elapsed * p1) end
    s[1] = min(p3, level + cost * p2)
    s[2] = at`,
  freshAt: `
    fresh = s[2] - floorDiv(s[1] - p3, p1)`,
  format: packState(CODE, 2),
}
