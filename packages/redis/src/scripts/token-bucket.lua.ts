import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Token bucket (packages/core/src/algorithms/token-bucket.ts), line for line.
 * s = { level in units, time of the last refill }, packed (packed-state.ts).
 */
const CODE = 1

/** Gives back `cost` units, never beyond a full bucket (the core's `refund`). */
const refund = `
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local level = capacity
    if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    s[1] = min(capacity, level + cost * unitsPerToken)
    s[2] = at`

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
    if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    local need = cost * unitsPerToken
    -- Cost 0 only inspects: it passes even on a bucket in debt (below empty, after a settle).
    if level < need and cost > 0 then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(level, unitsPerToken)), skew - floorDiv(level - capacity, unitsPerMs), skew - floorDiv(level - need, unitsPerMs)
    else
      local left = level - need
      if commit then s[1] = left; s[2] = at end
      reset = 0
      if left ~= capacity then reset = skew - floorDiv(left - capacity, unitsPerMs) end
      allowed, remaining, retry = 1, max(0, floorDiv(left, unitsPerToken)), 0
    end`,
  refund,
  // An extra is charged at the state's own time (first refilled to the reservation if it was
  // last written before it), at most one burst below empty: `capacity / unitsPerToken` is the
  // burst, exactly.
  settle: `
    if actual < charged then
      local cost = charged - actual${refund}
    else
      local base = min(chargedAt, now)
      if s[2] < base then
        local elapsed = base - s[2]
        local level = capacity
        if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
        s[1], s[2] = level, base
      end
      s[1] = max(-capacity, s[1] - min(actual - charged, 2 * capacity / unitsPerToken + 1) * unitsPerToken)
    end`,
  freshAt: `
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)`,
  format: packState(CODE, 2),
}
