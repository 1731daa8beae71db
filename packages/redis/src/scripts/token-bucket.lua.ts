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
  load: (read) => `
    ${unpackState(CODE, ['a', 'b'], read)}
    if a then
      s = { a, b }
      -- A last refill beyond a fill time ahead: the clock stepped back; move it to now.
      if b - now > fillMs then s[2] = now; moved = true end
    else
      s = { capacity, now }
    end`,
  decide: `
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local level = capacity
    if elapsed < fillMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    local need = cost * unitsPerToken
    if level < need then
      allowed, remaining, reset, retry = 0, floorDiv(level, unitsPerToken), skew - floorDiv(level - capacity, unitsPerMs), skew - floorDiv(level - need, unitsPerMs)
    else
      local left = level - need
      if commit then s[1] = left; s[2] = at end
      reset = 0
      if left ~= capacity then reset = skew - floorDiv(left - capacity, unitsPerMs) end
      allowed, remaining, retry = 1, floorDiv(left, unitsPerToken), 0
    end`,
  refund: `
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local level = capacity
    if elapsed < fillMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    s[1] = min(capacity, level + cost * unitsPerToken)
    s[2] = at`,
  freshAt: `
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)`,
  format: packState(CODE, 2),
}
