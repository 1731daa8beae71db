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
 * A script that decides one-rule requests: the request most gateways make (one rule matches),
 * so it is the one worth making lean. Everything that is fixed for the rule (the algorithm, its
 * scaled parameters, the expiry margin, whose clock) is written into the source as constants,
 * so a call carries only the keys, the costs and, with the caller's clock, the times. One call
 * may decide several requests of the rule, one per key, in order (the store coalesces requests
 * made in the same turn of the event loop; see coalesce.ts):
 *
 *   KEYS = [key₁, …, keyₙ]   ARGV = [cost₁, …, costₙ] or [cost₁, now₁, …, costₙ, nowₙ]
 *
 * and replies `[now, then per request: allowed (1/0), remaining, resetAfterMs, retryAfterMs]`
 * (retryAfterMs is 0 when allowed), `now` being the server's time, or 0 with the caller's clock.
 * Each request is decided and written before the next one is read, exactly as if each had its
 * own call: a request that charges one rule is all-or-nothing by itself.
 *
 * The decision and the write are the same fragments the general script runs, in the same
 * order: a one-rule request is decided identically by either script. Here they run inline,
 * not inside functions: a Lua closure made on every call (with its upvalues, and the garbage
 * they leave) cost about as much as the arithmetic it wraps. Each rule gets its own script (and
 * SHA); the store bounds how many it makes (see prepare.ts).
 */
export function oneChargeLua({ algorithm, params, marginMs, serverTime }: OneChargeShape): string {
  const isLog = algorithm.code === slidingLogLua.code
  const [p1, p2, p3] = params
  const clock = serverTime
    ? `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
local reply, step = { now }, 1`
    : `local reply, step, now = { 0 }, 2, 0`
  const requestNow = serverTime ? '' : '\n  now = tonumber(ARGV[i * 2])'
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
  // The sliding log tells the error of a key that holds a list (its long form) from a missing key.
  const read = `local v = redis.pcall('GET', key)${
    isLog
      ? ''
      : `
  -- Missing, or another type (a rule that changed algorithm): no state.
  if type(v) ~= 'string' then v = nil end`
  }`
  const set = `redis.call('SET', key, ${algorithm.format}, ${expire.set})`
  // A sliding log kept as a list is written in place: only its expiry is left to set.
  const write = isLog ? `if s[3] then ${set} else ${expire.log} end` : set
  return `-- tollgate: one ${algorithm.name} charge per key${ARITHMETIC_LUA}local p1, p2, p3 = ${p1}, ${p2}, ${p3}
${clock}
for i = 1, #KEYS do
  local key, cost, commit = KEYS[i], tonumber(ARGV[(i - 1) * step + 1]), true${requestNow}
  local s
  ${read}${algorithm.load}
  local allowed, remaining, reset, retry
  do${algorithm.decide}
  end
  if allowed == 1 then
    local fresh
    do${algorithm.freshAt}
    end
    if fresh <= now then
      redis.call('DEL', key)
    else
      ${write}
    end
  end
  local at = i * 4 - 2
  reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = allowed, remaining, reset, retry
end
return reply
`
}
