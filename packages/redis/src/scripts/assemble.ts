import { CARRY_LUA, readVersionedLua, versionedValueLua } from './carry.lua.js'
import { concurrencyLua } from './concurrency.lua.js'
import { gcraLua } from './gcra.lua.js'
import { IDENTITY_LIBRARY_LUA } from './identity-value.js'
import { leakyQueueLua } from './leaky-queue.lua.js'
import { bindParameters, type LuaAlgorithm } from './lua-algorithm.js'
import { LUA_ALGORITHMS } from './registry.js'
import { slidingLogLua } from './sliding-log.lua.js'

/**
 * `if code == 1 then … elseif code == 2 then … end` over every algorithm's fragment, each with
 * its parameter names bound to the slots `p1` … `p5` the library's functions receive.
 */
function dispatch(part: (algorithm: LuaAlgorithm) => string): string {
  return `${Object.values(LUA_ALGORITHMS)
    .map(
      (algorithm, i) =>
        `${i === 0 ? 'if' : 'elseif'} code == ${algorithm.code} then
    ${bindParameters(algorithm, ['p1', 'p2', 'p3', 'p4', 'p5'])}${part(algorithm)}`,
    )
    .join('\n  ')}
  end`
}

/** Exact floor(a / b) for whole numbers below 2^53 (see ARITHMETIC_LUA). */
const FLOOR_DIV_LUA = `local function floorDiv(a, b)
  -- a % b is computed inside the VM (a - floor(a / b) * b, every step exact below 2^53), so
  -- this is floor(a / b) without a call to math.floor, whose C call costs more than the rest.
  local q = (a - a % b) / b
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
`

/**
 * What every script starts with: the math helpers, and exact division. `floorDiv` is the core's,
 * correction included: Lua numbers are doubles, as in JavaScript, and every value is a whole
 * number below 2^53, so + − × agree bit for bit; only `a / b` rounds before `math.floor` sees
 * it. Numbers are stored packed as doubles (packed-state.ts) or go to `redis.call` as
 * `format('%d', n)`, which keeps every digit (`tostring` keeps only 14).
 */
export const ARITHMETIC_LUA = `
local floor, max, min, format = math.floor, math.max, math.min, string.format
${FLOOR_DIV_LUA}`

/**
 * ARITHMETIC_LUA with only the helpers `body` calls: a rule-set script runs its whole chunk on
 * every call, and each binding of a library function is two table lookups (about 250 Redis
 * instructions each).
 */
export function arithmeticFor(body: string): string {
  const library = {
    floor: 'math.floor',
    max: 'math.max',
    min: 'math.min',
    format: 'string.format',
  }
  const used = Object.entries(library).filter(([name]) => new RegExp(`\\b${name}\\(`).test(body))
  const bound =
    used.length === 0
      ? ''
      : `\nlocal ${used.map(([name]) => name).join(', ')} = ${used.map(([, from]) => from).join(', ')}`
  return `${bound}\n${/\bfloorDiv\(/.test(body) ? FLOOR_DIV_LUA : ''}`
}

/**
 * The general scripts' library: exact division, and functions that branch on the
 * algorithm code (load, freshAt, save; decide for the consume and refund scripts, refund for the
 * refund script, settle for the settle script): a handful of closures per call, whatever the
 * number of algorithms. `p1` … `p5` are the parameter slots as sent (ARGV); each algorithm's
 * branch reads them by name.
 */
export function libraryLua(entry: 'consume' | 'refund' | 'settle'): string {
  return `${ARITHMETIC_LUA}${IDENTITY_LIBRARY_LUA}
-- The state \`v\` (the string stored, or nil: a key never seen, init at now) of the algorithm
-- \`code\`, and whether it was moved to now (a clock that stepped back further than the rule's
-- reset span): a moved state is written back whatever the decision.
local function parse(code, key, v, p1, p2, p3, p4, p5, now)
  local s, moved = nil, false
  ${dispatch((a) => a.load())}
  return s, moved
end

local function decide(code, key, s, p1, p2, p3, p4, p5, cost, now, commit)
  local allowed, remaining, reset, retry
  ${dispatch((a) => a.decide)}
  return allowed, remaining, reset, retry
end
${
  entry === 'refund'
    ? `
local function refund(code, key, s, p1, p2, p3, p4, p5, cost, chargedAt, now)
  ${dispatch((a) => a.refund)}
end
`
    : ''
}${
  entry === 'settle'
    ? `
local function settle(code, key, s, p1, p2, p3, p4, p5, charged, actual, chargedAt, now)
  ${dispatch((a) => a.settle ?? '')}
end
`
    : ''
}${CARRY_LUA()}
-- The state of one key (or of \`field\` in the identity value under \`key\`, when not 0) for a
-- charge of (code, p…) whose carry argument is \`cv\` (carry.lua.ts): whether it was moved to
-- now (written back whatever the decision); whether a state was stored (what a settle gives
-- units back to); whether it was carried from other figures (written back even at cost 0); and
-- the version it is written under (-1: none); and when a newer version wrote it, the figures
-- it is decided and written under, its own ({ code, p1, …, p5 }), else nil: the charge's.
local function load(code, key, field, p1, p2, p3, p4, p5, now, cv)
  local v = nil
  if field ~= 0 then
    v = identityValue(key, now).states[field] or nil
  -- A concurrency key holds a sorted set of leases, which its branch reads itself.
  elseif code ~= ${concurrencyLua.code} then
    v = redis.pcall('GET', key)
    -- Missing, or another type (a rule that changed algorithm): no state. The sliding log tells
    -- the error of a key that holds a list (its long form) from a missing key.
    if code ~= ${slidingLogLua.code} and type(v) ~= 'string' then v = nil end
  end${readVersionedLua}
  -- A state of one number is kept as a double in the identity value (identity-value.ts).
  local from = code
  if carried then from = sc end
  if field ~= 0 and v and #v == 8 and (from == ${gcraLua.code} or from == ${leakyQueueLua.code}) then
    v = struct.unpack('<d', v)
  end
  local s, moved = nil, false
  if carried then
    local old = parse(sc, key, v, q1, q2, q3, q4, q5, now)
    s = carryState(sc, key, old, q1, q2, q3, q4, q5, code, p1, p2, p3, p4, p5, cv - ver * 4, now)
    if s == nil then s = parse(code, key, nil, p1, p2, p3, p4, p5, now) end
  else
    s, moved = parse(code, key, v, p1, p2, p3, p4, p5, now)
  end
  return s, moved, v ~= nil and v ~= false, carried, ver, adopted
end

local function freshAt(code, key, s, p1, p2, p3, p4, p5)
  local fresh
  ${dispatch((a) => a.freshAt)}
  return fresh
end

-- Writes a changed state with an expiry at the moment it is fresh again (dropping it then loses
-- nothing), plus a margin; a state that is already fresh is deleted instead. With the server's
-- clock the deadline is absolute (PXAT), so it agrees with TIME to the ms. Whole numbers below
-- 2^53 go to redis.call as decimal text made by format('%d'): exact, and far cheaper than the
-- '%.17g' Redis would print a number with. A state of a version (\`ver\` ≥ 0) starts with its
-- figures (carry.lua.ts).
local function save(code, key, field, s, p1, p2, p3, p4, p5, now, absolute, margin, ver)
  local fresh = freshAt(code, key, s, p1, p2, p3, p4, p5)
  if field ~= 0 then
    -- Kept in the identity value, written once by writeIdentities.
    local value = nil
    if fresh > now then
      ${dispatch((a) => ` value = ${a.format}`)}
      if ver >= 0 then
        if type(value) == 'number' then value = struct.pack('<d', value) end
        value = ${versionedValueLua('value')}
      end
    end
    setIdentityState(key, field, value, fresh, margin, now)
    return
  end
  if fresh <= now then
    redis.call('DEL', key)
    return
  end
  local mode, deadline = 'PX', format('%d', fresh - now + margin)
  if absolute then mode, deadline = 'PXAT', format('%d', fresh + margin) end
  local value
  ${dispatch((a) => ` value = ${a.format}`)}
  if type(value) == 'number' then value = format('%d', value) end
  if value and ver >= 0 then value = ${versionedValueLua('value')} end
  if value then
    redis.call('SET', key, value, mode, deadline)
  elseif absolute then
    -- A sliding log kept as a list, or a set of leases, already written in place.
    redis.call('PEXPIREAT', key, deadline)
  else
    redis.call('PEXPIRE', key, deadline)
  end
end
`
}
