import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Leaky bucket as a meter (packages/core/src/algorithms/leaky-bucket.ts), line for line.
 * s = { water level in units, time of the last leak }, packed (packed-state.ts).
 */
const CODE = 3

/** Lets out `cost` units' worth of water, never below empty (the core's `refund`). */
const refund = `
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local water = 0
    if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
    s[1] = max(0, water - cost * unitsPerToken)
    s[2] = at`

export const leakyBucketLua: LuaAlgorithm = {
  name: 'leaky_bucket',
  kind: 'rate',
  code: CODE,
  load: (read) => `
    ${unpackState(CODE, ['a', 'b'], read)}
    if a then
      s = { a, b }
      -- A last leak beyond a drain time ahead: the clock stepped back; move it to now.
      if b - now > fillMs then s[2] = now; moved = true end
    else
      s = { 0, now }
    end`,
  decide: `
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local water = 0
    if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
    local poured = water + cost * unitsPerToken
    if cost > 0 and poured > capacity then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(capacity - water, unitsPerToken)), skew - floorDiv(-water, unitsPerMs), skew - floorDiv(capacity - poured, unitsPerMs)
    else
      if commit then s[1] = poured; s[2] = at end
      reset = 0
      if poured ~= 0 then reset = skew - floorDiv(-poured, unitsPerMs) end
      allowed, remaining, retry = 1, max(0, floorDiv(capacity - poured, unitsPerToken)), 0
    end`,
  refund,
  // Poured at the state's own time, as the token bucket charges it, up to one burst above the
  // brim.
  settle: `
    if actual < charged then
      local cost = charged - actual${refund}
    else
      local base = min(chargedAt, now)
      if s[2] < base then
        local elapsed = base - s[2]
        local water = 0
        if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
        s[1], s[2] = water, base
      end
      s[1] = min(2 * capacity, s[1] + min(actual - charged, 2 * capacity / unitsPerToken + 1) * unitsPerToken)
    end`,
  freshAt: `
    fresh = s[2] - floorDiv(-s[1], unitsPerMs)`,
  format: packState(CODE, 2),
}
