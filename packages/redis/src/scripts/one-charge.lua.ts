import { ARITHMETIC_LUA } from './assemble.js'
import type { LuaAlgorithm } from './lua-algorithm.js'
import { slidingLogLua } from './sliding-log.lua.js'

/** What a one-charge script is built for: its rule's algorithm and parameters, and the store's clock. */
export type OneChargeShape = {
  readonly algorithm: LuaAlgorithm
  /** p1, p2, p3 as the algorithm's fragments read them, as decimal integers. */
  readonly params: readonly [string, string, string]
  /** Extra ms each key is kept (the store's `expiryMarginMs`). */
  readonly marginMs: number
  /** The Redis server's TIME decides (`true`), or the caller's `now` in ARGV[2]. */
  readonly serverTime: boolean
}

/**
 * A script that decides one charge of one rule: the request most gateways make (one rule
 * matches), so it is the one worth making lean. Everything that is fixed for the rule (the
 * algorithm, its scaled parameters, the expiry margin, whose clock) is written into the source
 * as constants, so a call carries only the key, the cost and, with the caller's clock, the time:
 *
 *   KEYS = [key]   ARGV = [cost] or [cost, now]
 *
 * and replies like the general consume script (main.lua.ts) for one charge:
 * `[now, 1, remaining, resetAfterMs]` when admitted and written,
 * `[now, 0, remaining, resetAfterMs, retryAfterMs]` when denied (nothing written).
 *
 * The decision and the write are the same fragments the general script runs, in the same
 * order: a one-charge request is decided identically by either script. Here they run inline,
 * not inside functions: a Lua closure made on every call (with its upvalues, and the garbage
 * they leave) cost about as much as the arithmetic it wraps. Each rule gets its own
 * script (and SHA); the store bounds how many it makes (see one-charge-scripts.ts).
 */
export function oneChargeLua({ algorithm, params, marginMs, serverTime }: OneChargeShape): string {
  const isLog = algorithm.code === slidingLogLua.code
  const [p1, p2, p3] = params
  const clock = serverTime
    ? `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)`
    : 'local now = tonumber(ARGV[2])'
  // Deadlines: absolute on the server's clock (agrees with TIME to the ms), relative otherwise.
  const expire = serverTime
    ? {
        set: `'PXAT', fresh + ${marginMs}`,
        log: `redis.call('PEXPIREAT', key, fresh + ${marginMs})`,
      }
    : {
        set: `'PX', fresh - now + ${marginMs}`,
        log: `redis.call('PEXPIRE', key, fresh - now + ${marginMs})`,
      }
  const read = isLog
    ? ''
    : `local v = redis.pcall('GET', key)
-- Missing, or another type (a rule that changed algorithm): no state.
if type(v) ~= 'string' then v = nil end`
  const write = isLog ? expire.log : `redis.call('SET', key, ${algorithm.format}, ${expire.set})`
  return `-- tollgate: one ${algorithm.name} charge${ARITHMETIC_LUA}local p1, p2, p3 = ${p1}, ${p2}, ${p3}
${clock}
local key, cost, commit = KEYS[1], tonumber(ARGV[1]), true
local s
${read}${algorithm.load}
local allowed, remaining, reset, retry
do${algorithm.decide}
end
if allowed ~= 1 then return { now, allowed, remaining, reset, retry } end
local fresh
do${algorithm.freshAt}
end
if fresh <= now then
  redis.call('DEL', key)
else
  ${write}
end
return { now, 1, remaining, reset }
`
}
