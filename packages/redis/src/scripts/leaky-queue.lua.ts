import type { LuaAlgorithm } from './lua-algorithm.js'

/** How far ahead the next slot may lie on a steady clock: a full line and one being served. */
const LINE = `(capacity + unitsPerToken)`

/** Sets `ahead`: the ticks the next slot lies ahead of now (0 when it has passed). */
const readAhead = `
    local ahead = max(0, s[1] - now * unitsPerMs)`

/** Whole requests of cost 1 that still find room in the line with the next slot `a` ahead. */
const roomAt = (a: string) =>
  `(${a} >= ${LINE} and 0 or min(floorDiv(capacity, unitsPerToken) + 1, floorDiv(${LINE} - ${a}, unitsPerToken)))`

const CODE = 7

/**
 * Leaky bucket as a queue (packages/core/src/algorithms/leaky-queue.ts), line for line.
 * s = { the next slot, in ticks of 1/unitsPerMs ms since the epoch } stored as a bare integer.
 * Its two parameters beyond the rate's: the ticks of `delay` (excess served at once) and of
 * `maxWaitMs`, or -1 for no bound. An allowed charge's `retry` carries its delayMs (the wait for
 * its slot), -1 for a cost-0 report, which has none: the replies send it where a denied charge
 * sends its retry time.
 */
export const leakyQueueLua: LuaAlgorithm = {
  name: 'leaky_queue',
  kind: 'rate',
  code: CODE,
  parameters: ['unitsPerMs', 'unitsPerToken', 'capacity', 'delayTicks', 'maxWaitTicks'],
  load: () => `
    local slot = nil
    if v then slot = tonumber(v) end
    if slot then s = { slot } else s = { now * unitsPerMs } end
    -- Further ahead than the key is held for: the clock stepped back; a full line at now.
    if s[1] - now * unitsPerMs >= (2 * -floorDiv(-${LINE}, unitsPerMs) + 1) * unitsPerMs then
      s[1] = now * unitsPerMs + ${LINE}
      moved = true
    end`,
  decide: `${readAhead}
    if cost == 0 then
      allowed, remaining, reset, retry = 1, ${roomAt('ahead')}, -floorDiv(-ahead, unitsPerMs), -1
    else
      local slot = ahead + (cost - 1) * unitsPerToken
      local wait = max(0, slot - delayTicks)
      if slot > capacity or (maxWaitTicks >= 0 and wait > maxWaitTicks) then
        local untilRoom = slot - capacity
        if maxWaitTicks >= 0 then untilRoom = max(untilRoom, wait - maxWaitTicks) end
        allowed, remaining, reset, retry = 0, ${roomAt('ahead')}, -floorDiv(-ahead, unitsPerMs), -floorDiv(-untilRoom, unitsPerMs)
      else
        local after = ahead + cost * unitsPerToken
        if commit then s[1] = now * unitsPerMs + after end
        allowed, remaining, reset, retry = 1, ${roomAt('after')}, -floorDiv(-after, unitsPerMs), -floorDiv(-wait, unitsPerMs)
      end
    end`,
  // A request that left the line gives its slot back; the ones after it keep theirs.
  refund: `${readAhead}
    s[1] = now * unitsPerMs + max(0, ahead - cost * unitsPerToken)`,
  freshAt: `
    fresh = -floorDiv(-s[1], unitsPerMs)`,
  format: 's[1]',
}
