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
    if tat then s = { tat } else s = { now * unitsPerMs } end`,
  decide: `
    local nowTicks = now * unitsPerMs
    local tat = max(s[1], nowTicks)
    local ahead = tat - nowTicks + cost * unitsPerToken
    if cost > 0 and ahead > capacity then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(capacity - (tat - nowTicks), unitsPerToken)), -floorDiv(nowTicks - tat, unitsPerMs), -floorDiv(capacity - ahead, unitsPerMs)
    else
      if commit then s[1] = nowTicks + ahead end
      allowed, remaining, reset, retry = 1, max(0, floorDiv(capacity - ahead, unitsPerToken)), -floorDiv(-ahead, unitsPerMs), 0
    end`,
  refund: `
    s[1] = max(now * unitsPerMs, s[1] - cost * unitsPerToken)`,
  freshAt: `
    fresh = -floorDiv(-s[1], unitsPerMs)`,
  format: `s[1]`,
}
