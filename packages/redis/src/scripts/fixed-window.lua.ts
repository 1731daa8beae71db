import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Fixed window (packages/core/src/algorithms/fixed-window.ts), line for line.
 * s = { window start in ms, count }, packed (packed-state.ts).
 */
const CODE = 4

export const fixedWindowLua: LuaAlgorithm = {
  name: 'fixed_window',
  kind: 'window',
  code: CODE,
  load: `
    ${unpackState(CODE, ['a', 'b'])}
    if a then
      s = { a, b }
      -- A window beyond the next one: the clock stepped back; the count moves to now's window.
      if a - now > windowMs then s[1] = floorDiv(now, windowMs) * windowMs; moved = true end
    else
      s = { floorDiv(now, windowMs) * windowMs, 0 }
    end`,
  decide: `
    local stored = s[1]
    local start = max(floorDiv(now, windowMs) * windowMs, stored)
    local count = 0
    if start == stored then count = s[2] end
    local untilEnd = start + windowMs - now
    if cost > 0 and count + cost > limit then
      allowed, remaining, reset, retry = 0, max(0, limit - count), untilEnd, untilEnd
    else
      local charged = count + cost
      if commit then s[1] = start; s[2] = charged end
      reset = untilEnd
      if charged == 0 then reset = 0 end
      allowed, remaining, retry = 1, max(0, limit - charged), 0
    end`,
  refund: `
    if floorDiv(chargedAt, windowMs) * windowMs == s[1] then s[2] = max(0, s[2] - cost) end`,
  freshAt: `
    if s[2] == 0 then fresh = 0 else fresh = s[1] + windowMs end`,
  format: packState(CODE, 2),
}
