import type { LuaAlgorithm } from './lua-algorithm.js'

/**
 * GCRA (packages/core/src/algorithms/gcra.ts), line for line. s = { theoretical arrival time in
 * ticks of 1/unitsPerMs ms }, stored as a bare integer, which Redis keeps inside the key's
 * object header: no allocation for the value at all.
 */
export const gcraLua: LuaAlgorithm = {
  name: 'gcra',
  kind: 'rate',
  code: 2,
  load: `
    local tat = nil
    if v then tat = tonumber(v) end
    if tat then s = { tat } else s = { now * p1 } end`,
  decide: `
    local nowTicks = now * p1
    local tat = max(s[1], nowTicks)
    local ahead = tat - nowTicks + cost * p2
    if cost > 0 and ahead > p3 then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(p3 - (tat - nowTicks), p2)), -floorDiv(nowTicks - tat, p1), -floorDiv(p3 - ahead, p1)
    else
      if commit then s[1] = nowTicks + ahead end
      allowed, remaining, reset, retry = 1, max(0, floorDiv(p3 - ahead, p2)), -floorDiv(-ahead, p1), 0
    end`,
  refund: `
    s[1] = max(now * p1, s[1] - cost * p2)`,
  freshAt: `
    fresh = -floorDiv(-s[1], p1)`,
  format: `s[1]`,
}
