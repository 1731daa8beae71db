import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Lengths in a calendar window's third parameter: two whole numbers of seconds, the first
 * multiplied by this (a year, 31.6 million seconds, stays below it).
 */
export const CALENDAR_LENGTH_BASE = 2 ** 25

/**
 * Where windows lie. A window of `windowMs` starts at its multiples. A calendar window cannot be
 * computed here (Lua knows no time zones): the store sends the caller's window and the next one
 * as three boundaries, b1 (in `windowMs`) and the two lengths after it (packed in `calendar`).
 * `nowStart`: the window of `now`, which is b1's for any time before b2 (a server clock behind
 * the caller's counts in the caller's window), else b2's. `endOf(x)`: b1 for a window before b1
 * (a stored window that has ended: windows are contiguous, so it ended at b1 or earlier, and
 * a state kept until b1 is dropped as the reference drops it), b2 after b1, b3 after b2; after
 * b3 (only reached when the server's clock is a window ahead of the caller's) an estimate that
 * is never short of it.
 */
const calendarBounds = `
      local first = floorDiv(calendar, ${CALENDAR_LENGTH_BASE})
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * ${CALENDAR_LENGTH_BASE}) * 1000`
const endOf = (start: string) =>
  `(${start} < windowMs and windowMs or (${start} < b2 and b2 or (${start} == b2 and b3 or ${start} + 2 * (b3 - b2))))`
const windowOfNow = `
    local nowStart, nowEnd
    if calendar == 0 then
      nowStart = floorDiv(now, windowMs) * windowMs
      nowEnd = nowStart + windowMs
    else${calendarBounds}
      nowStart = now < b2 and windowMs or b2
      nowEnd = ${endOf('nowStart')}
    end`

/**
 * Fixed window (packages/core/src/algorithms/fixed-window.ts), line for line.
 * s = { window start in ms, count }, packed (packed-state.ts).
 */
const CODE = 4

export const fixedWindowLua: LuaAlgorithm = {
  name: 'fixed_window',
  kind: 'window',
  code: CODE,
  parameters: ['limit', 'windowMs', 'calendar'],
  load: (read) => `${windowOfNow}
    ${unpackState(CODE, ['a', 'b'], read)}
    if a then
      s = { a, b }
      -- More than a window ahead of now: the clock stepped back. The count moves into a window
      -- starting at now (a calendar window: into the window after now's).
      if calendar == 0 then
        if a - now > windowMs then s[1] = now; moved = true end
      elseif a > nowEnd then s[1] = nowEnd; moved = true end
    else
      s = { nowStart, 0 }
    end`,
  decide: `${windowOfNow}
    local stored = s[1]
    local start, untilEnd
    if calendar == 0 then
      -- The stored window while it lasts; then now's, or the one following on from the stored
      -- one's end when now's began before it (a window moved off the boundaries).
      local storedEnd = stored + windowMs
      if now < storedEnd then start = stored
      elseif nowStart >= storedEnd then start = nowStart
      else start = storedEnd end
      untilEnd = start + windowMs - now
    else
      start = max(nowStart, stored)
      if start == nowStart then untilEnd = nowEnd - now
      else${calendarBounds}
        untilEnd = ${endOf('start')} - now
      end
    end
    local count = 0
    if start == stored then count = s[2] end
    if cost > 0 and count + cost > limit then
      allowed, remaining, reset, retry = 0, max(0, limit - count), untilEnd, untilEnd
    else
      local charged = count + cost
      if commit then s[1] = start; s[2] = charged end
      reset = untilEnd
      if charged == 0 then reset = 0 end
      allowed, remaining, retry = 1, max(0, limit - charged), 0
    end`,
  // A calendar charge's time comes as the start of its window (the store computes it).
  refund: `
    if calendar == 0 then
      if chargedAt >= s[1] and chargedAt < s[1] + windowMs then s[2] = max(0, s[2] - cost) end
    elseif chargedAt == s[1] then s[2] = max(0, s[2] - cost) end`,
  // While the charge's window still counts, its count becomes what charging `actual` would have
  // made (above the limit if need be); once it has rolled over nothing comes back, and an extra
  // is charged to the window of now, opened as `decide` opens it. A calendar charge's time comes
  // as the start of its window, as for a refund.
  settle: `${windowOfNow}
    local stored = s[1]
    local storedEnd, charging
    if calendar == 0 then
      storedEnd = stored + windowMs
      charging = chargedAt >= stored and chargedAt < storedEnd
    else${calendarBounds}
      storedEnd = ${endOf('stored')}
      charging = chargedAt == stored
    end
    if now < storedEnd and charging then
      s[2] = max(0, s[2] + actual - charged)
    elseif actual > charged then
      local start = stored
      if now >= storedEnd then start = max(nowStart, storedEnd) end
      local count = 0
      if start == stored then count = s[2] end
      s[1], s[2] = start, count + actual - charged
    end`,
  freshAt: `
    if calendar == 0 then fresh = s[1] + windowMs
    else${calendarBounds}
      fresh = ${endOf('s[1]')}
    end`,
  format: packState(CODE, 2),
}
