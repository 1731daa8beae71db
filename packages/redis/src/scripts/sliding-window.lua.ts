import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Sliding window counter (packages/core/src/algorithms/sliding-window.ts), line for line.
 * s = { current window start in ms, previous count, current count }, packed (packed-state.ts).
 * `resetAt` and `retryAt` are the core's helpers of the same names, inlined.
 */
const resetAt = (current: string) =>
  `if ${current} > 0 then reset = start + 2 * windowMs elseif previous > 0 then reset = start + windowMs else reset = 0 end`

const CODE = 6

export const slidingWindowLua: LuaAlgorithm = {
  name: 'sliding_window',
  kind: 'window',
  code: CODE,
  load: `
    ${unpackState(CODE, ['a', 'b', 'c'])}
    if a then
      s = { a, b, c }
      -- A window beyond the next one: the clock stepped back; both counts move into now's
      -- current window, where they weigh in full.
      if a - now > windowMs then
        s[1], s[2], s[3] = floorDiv(now, windowMs) * windowMs, 0, b + c
        moved = true
      end
    else
      s = { floorDiv(now, windowMs) * windowMs, 0, 0 }
    end`,
  decide: `
    local budget = limit * windowMs
    local stored = s[1]
    local start = max(floorDiv(now, windowMs) * windowMs, stored)
    local previous, current = 0, 0
    if start == stored then
      previous, current = s[2], s[3]
    elseif start == stored + windowMs then
      previous = s[3]
    end
    local at = max(now, start)
    local overlap = windowMs - (at - start)
    local used = previous * overlap + current * windowMs
    if cost > 0 and used + cost * windowMs > budget then
      ${resetAt('current')}
      local retryAt = nil
      local room = (limit - current - cost) * windowMs
      if room >= 0 and previous > 0 then
        local elapsed = windowMs - floorDiv(room, previous)
        if elapsed < windowMs then retryAt = start + elapsed end
      end
      if retryAt == nil then
        if current == 0 then
          retryAt = start + windowMs
        else
          retryAt = start + windowMs + max(0, windowMs - floorDiv((limit - cost) * windowMs, current))
        end
      end
      allowed, remaining, reset, retry = 0, max(0, floorDiv(budget - used, windowMs)), reset - now, retryAt - now
    else
      local charged = current + cost
      if commit then s[1] = start; s[2] = previous; s[3] = charged end
      ${resetAt('charged')}
      allowed, remaining, reset, retry = 1, max(0, floorDiv(budget - used - cost * windowMs, windowMs)), max(0, reset - now), 0
    end`,
  refund: `
    local chargedStart = floorDiv(chargedAt, windowMs) * windowMs
    if chargedStart == s[1] then
      s[3] = max(0, s[3] - cost)
    elseif chargedStart == s[1] - windowMs then
      s[2] = max(0, s[2] - cost)
    end`,
  freshAt: `
    if s[3] > 0 then fresh = s[1] + 2 * windowMs elseif s[2] > 0 then fresh = s[1] + windowMs else fresh = 0 end`,
  format: packState(CODE, 3),
}
