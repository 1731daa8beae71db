import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Whether the TAT is kept as two numbers (whole ms, ticks beyond them): `split`, bound with the
 * parameters (lua-algorithm.ts, rateConstants).
 */
const SPLIT = 'split'

/** Sets `aheadMs`, `aheadTicks`: how far the TAT lies ahead of now (0, 0 when it has passed). */
const readAhead = `
    local aheadMs, aheadTicks
    if ${SPLIT} then
      aheadMs, aheadTicks = s[1] - now, s[2]
    else
      local ticks = s[1] - now * unitsPerMs
      aheadMs = floorDiv(ticks, unitsPerMs)
      aheadTicks = ticks - aheadMs * unitsPerMs
    end
    if aheadMs < 0 then aheadMs, aheadTicks = 0, 0 end`

/** Writes `aheadMs`, `aheadTicks` ahead of now into `s`. */
const writeAhead = `
    if ${SPLIT} then s[1], s[2] = now + aheadMs, aheadTicks else s[1] = (now + aheadMs) * unitsPerMs + aheadTicks end`

const CODE = 2

/** Moves the TAT back by `cost`, never before now (the core's `refund`). */
const refund = `${readAhead}
    local units = -cost * unitsPerToken
    local ms = floorDiv(units, unitsPerMs)
    aheadMs = aheadMs + ms
    aheadTicks = aheadTicks + units - ms * unitsPerMs
    if aheadTicks >= unitsPerMs then aheadMs, aheadTicks = aheadMs + 1, aheadTicks - unitsPerMs end
    if aheadMs < 0 then aheadMs, aheadTicks = 0, 0 end${writeAhead}`

/**
 * GCRA (packages/core/src/algorithms/gcra.ts), line for line. s = { TAT in ticks of
 * 1/unitsPerMs ms } stored as a bare integer, which Redis keeps inside the key's object header
 * (no allocation for the value at all); or, for rates too fine for ticks since the epoch,
 * s = { whole ms, ticks beyond them }, packed (packed-state.ts).
 */
export const gcraLua: LuaAlgorithm = {
  name: 'gcra',
  kind: 'rate',
  code: CODE,
  load: (read) => `
    if ${SPLIT} then
      ${unpackState(CODE, ['a', 'b'], read)}
      if a then s = { a, b } else s = { now, 0 } end
    else
      local tat = nil
      if v then tat = tonumber(v) end
      if tat then s = { tat } else s = { now * unitsPerMs } end
    end
    -- More than two fill times ahead (whole ms): the clock stepped back; a drained bucket at
    -- now. Told without a division: a TAT in ticks is more than 2 × fillMs whole ms ahead when
    -- it is at least (2 × fillMs + 1) ms of ticks ahead (exact: both sides stay below 2^53
    -- wherever the TAT is one number).
    if (split and s[1] - now > 2 * fillMs) or (not split and s[1] - now * unitsPerMs >= (2 * fillMs + 1) * unitsPerMs) then
      local aheadMs = floorDiv(capacity, unitsPerMs)
      local aheadTicks = capacity - aheadMs * unitsPerMs
      ${writeAhead}
      moved = true
    end`,
  decide: `${readAhead}
    local need = cost * unitsPerToken
    local resetMs = aheadMs
    if aheadTicks > 0 then resetMs = aheadMs + 1 end
    local ticks = nil
    if aheadMs <= fillMs then ticks = aheadMs * unitsPerMs + aheadTicks end
    local fits = ticks ~= nil and ticks <= capacity - need
    if cost > 0 and not fits then
      local left = 0
      if ticks ~= nil and ticks <= capacity then left = floorDiv(capacity - ticks, unitsPerToken) end
      allowed, remaining, reset, retry = 0, left, resetMs, aheadMs - floorDiv(capacity - aheadTicks - need, unitsPerMs)
    elseif not fits then
      allowed, remaining, reset, retry = 1, 0, resetMs, 0
    else
      local after = ticks + need
      -- ceil(after / unitsPerMs) from the floor and what is left over: one division, not two.
      local afterMs = floorDiv(after, unitsPerMs)
      local afterTicks = after - afterMs * unitsPerMs
      if commit then
        aheadMs, aheadTicks = afterMs, afterTicks${writeAhead}
      end
      if afterTicks > 0 then afterMs = afterMs + 1 end
      allowed, remaining, reset, retry = 1, floorDiv(capacity - after, unitsPerToken), afterMs, 0
    end`,
  refund,
  // The extra moves the TAT itself (or the reservation's time, if the TAT is earlier), at most
  // two buckets ahead of the reservation (or of now, if earlier): one burst of debt.
  settle: `
    if actual < charged then
      local cost = charged - actual${refund}
    elseif ${SPLIT} then
      local base = min(chargedAt, now)
      local ms, ticks = s[1] - base, s[2]
      if ms < 0 then ms, ticks = 0, 0 end
      local boundMs = floorDiv(2 * capacity, unitsPerMs)
      if ms <= boundMs + 1 then
        local room = (boundMs - ms) * unitsPerMs + (2 * capacity - boundMs * unitsPerMs) - ticks
        if room > 0 then
          local extra = min(actual - charged, -floorDiv(-room, unitsPerToken)) * unitsPerToken
          local total = ticks + min(room, extra)
          local carried = floorDiv(total, unitsPerMs)
          s[1], s[2] = base + ms + carried, total - carried * unitsPerMs
        end
      end
    else
      local base = min(chargedAt, now) * unitsPerMs
      local tat = max(s[1], base)
      local room = base + 2 * capacity - tat
      if room > 0 then
        local extra = min(actual - charged, -floorDiv(-room, unitsPerToken)) * unitsPerToken
        s[1] = tat + min(room, extra)
      end
    end`,
  freshAt: `
    if ${SPLIT} then
      fresh = s[1]
      if s[2] > 0 then fresh = fresh + 1 end
    else
      fresh = -floorDiv(-s[1], unitsPerMs)
    end`,
  format: `(${SPLIT} and ${packState(CODE, 2)} or s[1])`,
}
