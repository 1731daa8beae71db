import { fixedWindowLua } from './fixed-window.lua.js'
import { gcraLua } from './gcra.lua.js'
import { leakyBucketLua } from './leaky-bucket.lua.js'
import { slidingWindowLua } from './sliding-window.lua.js'
import { tokenBucketLua } from './token-bucket.lua.js'

/*
 * Rules changed while running, on Redis: a versioned state (a rule that declares `version`)
 * starts with its own figures, so that any process can carry it into its figures exactly, and a
 * process with older figures can tell a newer state and leave it as it is.
 *
 *   'V', the algorithm code (1 byte), the version, p1 … p5 (little-endian doubles), then the
 *   string a state of those figures holds (packed-state.ts; GCRA's TAT as text, or as a double
 *   in the identity value).
 *
 * The carry functions mirror the core's (algorithms/carry.ts, carried-use.ts, rate-carry.ts,
 * window-carry.ts) in the same exact integer arithmetic. Only the algorithms whose state is one
 * string carry here: the rate rules and the fixed (not calendar) and sliding windows.
 */

/** The byte a versioned state starts with ('V'), which no state of its own starts with. */
const VERSIONED_TAG = 86

/** The bytes before the state: the tag, the code, the version and five parameters. */
export const VERSIONED_HEADER_BYTES = 2 + 8 * 6

/** A charge's carry argument: -1 for a rule without `version`, else version × 4 + strategy. */
export const CARRY_STRATEGY_CODES = { keep: 0, proportional: 1, reset: 2, additive: 3 } as const

const TB = tokenBucketLua.code
const GCRA = gcraLua.code
const LB = leakyBucketLua.code
const FW = fixedWindowLua.code
const SW = slidingWindowLua.code

/** GCRA keeps its TAT as two numbers at this rate (lua-algorithm.ts's `split`, from ARGV). */
const split = (upm: string, cap: string) =>
  `((4398046511104 + 2) * ${upm} + 2 * ${cap} + 4 * ${upm} > 9007199254740991)`

/**
 * The carry functions, after `parse`, `decide` and `freshAt` in the general scripts' library.
 * `carryState` answers the state under (code, p…) at `now` of a state `s` under (from, q…), or
 * nil when it starts fresh.
 */
export const CARRY_LUA = () => `${SCALED_UP_LUA}${CARRIED_LUA}`

/** ceil(a × b / c), exact: the core's scaledUp (a product past 2^53 included). */
export const SCALED_UP_LUA = `
-- ceil(a × b / c) for whole a, b ≥ 0 and 0 < c < 2^52, exact (the core's scaledUp): a product
-- past 2^53 is multiplied out in 24-bit limbs and divided bit by bit (rare: once per key and
-- change, for rates whose scaled units are large).
local function scaledUp(a, b, c)
  local p = a * b
  -- floorDiv is exact while |numerator| + 2 × divisor stays below 2^53.
  if p + 2 * c < 9007199254740992 then return -floorDiv(-p, c) end
  -- Past 2^53 by far: beyond any allowance, where the caller caps it.
  if p / c >= 9007199254740992 then return p / c end
  local B = 16777216
  local x = { a % B, floor(a / B) % B, floor(a / B / B) }
  local y = { b % B, floor(b / B) % B, floor(b / B / B) }
  local r = { 0, 0, 0, 0, 0, 0 }
  for i = 1, 3 do
    for j = 1, 3 do r[i + j - 1] = r[i + j - 1] + x[i] * y[j] end
  end
  for k = 1, 5 do
    local over = floor(r[k] / B)
    r[k] = r[k] - over * B
    r[k + 1] = r[k + 1] + over
  end
  local q, rem = 0, 0
  for k = 6, 1, -1 do
    local limb = r[k]
    for bit = 23, 0, -1 do
      local weight = 2 ^ bit
      local set = 0
      if limb >= weight then set = 1; limb = limb - weight end
      rem = rem * 2 + set
      q = q * 2
      if rem >= c then rem = rem - c; q = q + 1 end
    end
  end
  if rem > 0 then q = q + 1 end
  return q
end
`

const CARRIED_LUA = `
-- The amount used under the new figures from \`used\` under the old (the core's carriedUse).
local function carriedUse(strategy, used, fromFull, fromPer, toFull, toPer)
  if strategy == ${CARRY_STRATEGY_CODES.reset} or used <= 0 then return 0 end
  if strategy == ${CARRY_STRATEGY_CODES.proportional} then return min(toFull, scaledUp(used, toFull, fromFull)) end
  local same = scaledUp(used, toPer, fromPer)
  if strategy == ${CARRY_STRATEGY_CODES.keep} then return min(same, 2 * toFull) end
  return min(same, toFull)
end

-- A rate rule's amount used at now, in scaled units (the core's rateUse.usedAt).
local function rateUsed(code, s, unitsPerMs, capacity, now)
  local fill = -floorDiv(-capacity, unitsPerMs)
  if code == ${GCRA} then
    local ahead
    if ${split('unitsPerMs', 'capacity')} then ahead = (s[1] - now) * unitsPerMs + s[2] else ahead = s[1] - now * unitsPerMs end
    if ahead > (2 * fill + 1) * unitsPerMs then return capacity end
    return max(0, ahead)
  end
  local last = s[2]
  if last - now > fill then last = now end
  local elapsed = max(now, last) - last
  if elapsed >= -floorDiv(-2 * capacity, unitsPerMs) then return 0 end
  if code == ${TB} then return capacity - min(capacity, s[1] + elapsed * unitsPerMs) end
  return max(0, s[1] - elapsed * unitsPerMs)
end

-- A state under (code, p…) at now holding \`used\` (the core's withUse).
local function withUse(code, key, used, p1, p2, p3, p4, p5, now)
  if code == ${GCRA} then
    if not ${split('p1', 'p3')} then return { now * p1 + used } end
    local ms = floorDiv(used, p1)
    return { now + ms, used - ms * p1 }
  end
  if code == ${TB} or code == ${LB} then
    local at = now - floorDiv(-max(0, used - p3), p1)
    if code == ${LB} then return { min(used, p3), at } end
    return { max(0, p3 - used), at }
  end
  local s = parse(code, key, nil, p1, p2, p3, p4, p5, now)
  if code == ${FW} then s[2] = used
  elseif p3 == 0 then s[3] = used
  else decide(code, key, s, p1, p2, p3, p4, p5, min(used, p1), now, true) end
  return s
end

local function isRate(code) return code == ${TB} or code == ${GCRA} or code == ${LB} end

-- The state s under (from, q…) carried into (code, p…) at now by strategy, or nil: fresh (a
-- reset, nothing used, or algorithms with no exact conversion).
local function carryState(from, key, s, q1, q2, q3, q4, q5, code, p1, p2, p3, p4, p5, strategy, now)
  local used, fromFull, fromPer, toFull, toPer
  if isRate(from) and isRate(code) then
    used, fromFull, fromPer, toFull, toPer = rateUsed(from, s, q1, q3, now), q3, q2, p3, p2
  elseif from == code and code == ${FW} and q3 == 0 and p3 == 0 then
    used = 0
    if now < s[1] + q2 then used = s[2] end
    fromFull, fromPer, toFull, toPer = q1, 1, p1, 1
  elseif from == code and code == ${SW} then
    local _, remaining = decide(from, key, s, q1, q2, q3, q4, q5, 0, now, false)
    used, fromFull, fromPer, toFull, toPer = q1 - remaining, q1, 1, p1, 1
  else
    return nil
  end
  local carried = carriedUse(strategy, used, fromFull, fromPer, toFull, toPer)
  if carried == 0 then return nil end
  return withUse(code, key, carried, p1, p2, p3, p4, p5, now)
end
`

/**
 * The statements of `load` after it has read `v`: a versioned state's header is taken off, and
 * its figures compared with the charge's (`cv`: its carry argument). A state of a newer version
 * (or of the same algorithm, read by a charge of a rule without a version) is decided under its
 * own figures (`adopted`: its code and parameters), which the caller then uses and writes back;
 * one of an older version, or of other figures under the same version, is carried into the
 * charge's; a plain state is read under the charge's figures.
 */
export const readVersionedLua = `
  local ver, carried, adopted, sc, sv, q1, q2, q3, q4, q5 = -1, false, nil
  if cv >= 0 then ver = floor(cv / 4) end
  -- The length first: most states are shorter than a header, and cost no call to string.byte.
  if type(v) == 'string' and #v > ${VERSIONED_HEADER_BYTES} and string.byte(v) == ${VERSIONED_TAG} then
    sc, sv, q1, q2, q3, q4, q5 = struct.unpack('<Bdddddd', v, 2)
    v = string.sub(v, ${VERSIONED_HEADER_BYTES + 1})
    if sv > ver and (cv >= 0 or sc == code) then
      code, p1, p2, p3, p4, p5, ver = sc, q1, q2, q3, q4, q5, sv
      adopted = { sc, q1, q2, q3, q4, q5 }
    elseif cv < 0 then
      -- Another algorithm's, to a rule without a version: no state, as a plain one would be.
      v = nil
    elseif sc ~= code or q1 ~= p1 or q2 ~= p2 or q3 ~= p3 or q4 ~= p4 or q5 ~= p5 then
      carried = true
    end
  end`

/** Lua that prefixes \`value\` (a string) with the versioned header of (code, ver, p…). */
export const versionedValueLua = (value: string) =>
  `string.char(${VERSIONED_TAG}) .. struct.pack('<Bdddddd', code, ver, p1, p2, p3, p4, p5) .. ${value}`
