import { concurrencyLua } from './concurrency.lua.js'
import { fixedWindowLua } from './fixed-window.lua.js'
import { leakyQueueLua } from './leaky-queue.lua.js'
import { serverNowLua } from './server-time.lua.js'
import { slidingLogLua } from './sliding-log.lua.js'
import { slidingWindowLua } from './sliding-window.lua.js'

/**
 * The entry points. Both take one KEYS entry per charge and
 *   ARGV = [now, or -1 for the server's TIME; expiry margin (ms); flag;
 *           then per charge: algorithm code, cost, shadow (1/0), p1, p2, p3, p4, p5, field, carry]
 * where `field` is the charge's field in the identity value under its key (identity-value.ts),
 * or 0 for a key of its own, and `carry` -1 for a rule without a version, else the version of
 * its figures × 4 + how a state of other figures carries into them (carry.lua.ts).
 * and reply [now, then per charge: allowed, remaining, resetAfterMs, then retryAfterMs of each
 * charge not allowed, or the delayMs of each allowed leaky_queue charge (-1: none, a cost-0
 * report), in order], where allowed is 1, or 0 when denied, or 2 when denied on
 * commit after passing the dry run (a request that charges one key twice). A consume call with
 * ARGV[3] = 2 (one slot group of a request spanning slots) also ends its reply with the time at
 * which each charge was recorded (see `recordedAt`), so that a refund can find it exactly. A call
 * (consume or refund) whose concurrency loads swept ended leases ends its reply with the units
 * swept per charge (0 but at the first charge on each such key). Replies are
 * integers, so they carry the decisions exactly. Every integer in a reply costs both sides
 * (Redis converts it, the client decodes it), so a retry time of 0 is never sent, and whether
 * the request was committed is left to the caller, who can tell from the verdicts (no enforcing
 * charge at 0) and ARGV[3].
 */
export const ARGS_PER_CHARGE = 10

/**
 * What a reader of the general scripts sees first (lua/consume.lua, lua/refund.lua,
 * lua/settle.lua). A settle sends, in a charge's cost and shadow places, the units charged (the
 * estimate) and the actual cost.
 */
export const mainHeaderLua = (name: 'consume' | 'refund' | 'settle', flag: string) =>
  `-- tollgate: ${name}. KEYS: one per charge.
-- ARGV: now (-1: the server's TIME), expiry margin (ms), ${flag},
-- then per charge: algorithm code, ${name === 'settle' ? 'units charged, actual cost' : 'cost, shadow (1/0)'}, the algorithm's parameters
-- (rate: unitsPerMs, unitsPerToken, capacity, 0, 0; window: limit, windowMs, 0, 0, 0;
-- leaky_queue: unitsPerMs, unitsPerToken, capacity, delay in ticks, max wait in ticks or -1)
-- its field in the identity value under its key (0: a key of its own), and its carry
-- (-1: no version; else version × 4 + 0 keep, 1 proportional, 2 reset, 3 additive).`

/** Reads the clock: the caller's (ARGV[1] ≥ 0) or this server's TIME, rounded down to the ms. */
export const clock = `
-- \`absolute\` is the library's (identity-value.ts): whether now is the server's time.
local now = tonumber(ARGV[1])
if now < 0 then
  ${serverNowLua('now')}
  absolute = true
end
local margin = tonumber(ARGV[2])
local n = #KEYS
`

/**
 * The time at which the state holds a charge just committed, which is not always `now`: the
 * window algorithms hold a clock that stepped back (or a caller clock behind another's) at the
 * state's own time: the stored window's start, the sliding log's newest entry. A refund given
 * this time undoes exactly that charge. Rate algorithms refund by cost and take `now`.
 */
const recordedAt = (into: string, code: string, s: string, indent: string) => `local ${into} = now
${indent}if ${code} == ${fixedWindowLua.code} or ${code} == ${slidingWindowLua.code} then ${into} = ${s}[1] elseif ${code} == ${slidingLogLua.code} then ${into} = ${s}[2] end`

/**
 * Turns the working reply [now, committed, (allowed, remaining, reset, retry) × n] into the sent
 * one; `withTimes`: the consume script, which adds the recorded times when asked.
 */
export const compactReply = (withTimes: boolean, before = '') => `
local sent, retries = { now }, {}
for i = 1, n do
  local at = i * 4 - 1
  sent[i * 3 - 1], sent[i * 3], sent[i * 3 + 1] = reply[at], reply[at + 1], reply[at + 2]
  if reply[at] ~= 1 or states[i].code == ${leakyQueueLua.code} then retries[#retries + 1] = reply[at + 3] end
end
for j = 1, #retries do sent[3 * n + 1 + j] = retries[j] end
${
  withTimes
    ? `if ARGV[3] == '2' then
  for i = 1, n do
    ${recordedAt('t', 'states[i].code', 'states[i]', '    ')}
    sent[#sent + 1] = t
  end
end
`
    : ''
}-- The units each concurrency load swept (ended leases: a process that died or stalled holding
-- them), at the first charge on its key, end the reply when any were swept: most calls sweep
-- nothing and send nothing more. The store counts them as expired, once each.
local swept = false
for _, s in ipairs(distinct) do
  if s.code == ${concurrencyLua.code} and s[2] > 0 then swept = true end
end
if swept then
  for i = 1, n do
    local s = states[i]
    if s.code == ${concurrencyLua.code} and s.i == i then sent[#sent + 1] = s[2] else sent[#sent + 1] = 0 end
  end
end
${before}return sent`

/**
 * Loads each distinct state once (one request may charge a key twice): a key of its own, or a
 * field of an identity value (key and field).
 */
export const loadAll = `
local reply = { now, 0 }
local states, byKey, distinct = {}, {}, {}
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local key = KEYS[i]
  local place = key
  if ARGV[base + 9] ~= '0' then place = key .. ' ' .. ARGV[base + 9] end
  local s = byKey[place]
  if s == nil then
    local code, moved, stored, carried, ver, adopted = tonumber(ARGV[base + 1])
    s, moved, stored, carried, ver, adopted = load(code, key, tonumber(ARGV[base + 9]), tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), now, tonumber(ARGV[base + 10]))
    -- A state a newer version wrote is decided and written under its own figures (s.q, see
    -- load; each charge's own otherwise, a concurrency charge's lease among them); a state
    -- carried into the charge's figures is written whatever the decision.
    if adopted then code = adopted[1] end
    s.code, s.key, s.i, s.dirty, s.moved, s.stored, s.ver, s.q = code, key, i, carried, moved, stored, ver, adopted
    s.carried = carried
    byKey[place] = s
    distinct[#distinct + 1] = s
  end
  -- A moved state is written whatever the decision, unless only inspections (cost 0) read it.
  if s.moved and ARGV[base + 2] ~= '0' then s.dirty = true end
  states[i] = s
end
`

/**
 * The parameters of the charge whose arguments start at `base`, on its state `s`: the charge's
 * own, or those of the newer version that wrote the state (see loadAll).
 */
const paramsOf = (s: string) =>
  [1, 2, 3, 4, 5]
    .map((j) => `(${s}.q and ${s}.q[${j + 1}] or tonumber(ARGV[base + ${j + 3}]))`)
    .join(', ')

/** decide(...) for charge i; `cost` may be overridden (the cost-0 report). */
export const decideCharge = (cost: string, commit: string) =>
  `decide(states[i].code, states[i].key, states[i], ${paramsOf('states[i]')}, ${cost}, now, ${commit})`

/** Writes back each distinct state for which `which` (Lua, of `s`) holds. */
export const saveStates = (which: string) => `
for _, s in ipairs(distinct) do
  if ${which} then
    local base = (s.i - 1) * ${ARGS_PER_CHARGE} + 3
    save(s.code, s.key, tonumber(ARGV[base + 9]), s, ${paramsOf('s')}, now, absolute, margin, s.ver)
  end
end
writeIdentities()
`

export const saveDirty = saveStates('s.dirty')

/**
 * The multi-charge decision of a consume, after `loadAll`: a dry run of every charge, then the
 * commit (or the cost-0 report of a denied request) into `reply`; `denied` must be set. Shared
 * with the penalised consume (penalties.lua.ts), which decides as consume does when not blocked.
 */
export const decideAll = `-- The dry run of a charge on a key charged earlier in the request counts the earlier charges
-- that passed too, so that a commit never finds the room gone: the request is all or nothing.
-- Cost -1: with the charges before it on its key, beyond the limit (never passes): denied, with
-- what is left and a retry no sooner than the key is whole.
local spent = {}
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local at = i * 4 - 1
  local cost = tonumber(ARGV[base + 2])
  if cost < 0 then
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('0', 'false')}
    reply[at], reply[at + 3] = 0, reply[at + 2]
  else
    cost = (spent[states[i]] or 0) + cost
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('cost', 'false')}
  end
  if reply[at] == 1 then
    spent[states[i]] = cost
  elseif ARGV[base + 3] ~= '1' then
    denied = true
  end
end
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local at = i * 4 - 1
  if reply[at] == 1 then
    if denied then
      reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('0', 'false')}
    else
      reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('tonumber(ARGV[base + 2])', 'true')}
      if ARGV[base + 2] ~= '0' then states[i].dirty = true end
      -- Passed the dry run, denied on commit: an earlier charge on the same key took the room.
      if reply[at] == 0 then reply[at] = 2 end
    end
  end
end
`

/**
 * Consume, exactly as the core's \`applyCharges\`: a dry run of every charge (a key charged twice
 * counts its earlier charges); if an enforcing one
 * is denied (or ARGV[3] = 1: another slot group already denied this request), nothing is written
 * and the charges that would have passed are reported at cost 0; otherwise every allowed charge
 * is committed.
 */
export const consumeMainLua = `${clock}
local denied = ARGV[3] == '1'
if n == 1 and not denied then
  -- One charge (most requests): applyCharges reduces to one decision, written only if allowed.
  local p1, p2, p3, p4, p5 = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  -- The key and algorithm code travel as arguments, not as fields of \`s\`: fields beside the
  -- state's slots would cost a hash part, allocated anew on every call.
  local code, key, field = tonumber(ARGV[4]), KEYS[1], tonumber(ARGV[12])
  local s, moved, _, carried, ver, adopted = load(code, key, field, p1, p2, p3, p4, p5, now, tonumber(ARGV[13]))
  if adopted then code, p1, p2, p3, p4, p5 = unpack(adopted) end
  local cost = tonumber(ARGV[5])
  local allowed, remaining, reset, retry = decide(code, key, s, p1, p2, p3, p4, p5, cost, now, true)
  -- An inspection (cost 0) writes nothing, not even a move: the core decides it on a copy. A
  -- state carried into new figures is written whatever the decision, as the memory store does.
  if (cost > 0 and (allowed == 1 or moved)) or carried then
    save(code, key, field, s, p1, p2, p3, p4, p5, now, absolute, margin, ver)
    writeIdentities()
  end
  -- A load that swept ended leases ends the reply with how many units (see compactReply).
  if code == ${concurrencyLua.code} and s[2] > 0 then
    local sent = { now, allowed, remaining, reset }
    if allowed ~= 1 then sent[5] = retry end
    if ARGV[3] == '2' then sent[#sent + 1] = now end
    sent[#sent + 1] = s[2]
    return sent
  end
  if ARGV[3] == '2' then
    ${recordedAt('t', 'code', 's', '    ')}
    if allowed == 1 and code ~= ${leakyQueueLua.code} then return { now, 1, remaining, reset, t } end
    return { now, allowed, remaining, reset, retry, t }
  end
  if allowed == 1 and code ~= ${leakyQueueLua.code} then return { now, 1, remaining, reset } end
  return { now, allowed, remaining, reset, retry }
end
${loadAll}${decideAll}${saveDirty}${compactReply(true)}
`

/**
 * Settle: replaces each charge's estimate with its actual cost as the core's \`settle\` does, in
 * order (a state charged twice is settled twice), and writes the states back as one unit. ARGV[3]
 * holds the times the charges were made, as for a refund. A state the store no longer holds (it
 * was fresh again, and dropped) gets nothing back, and nothing is written for it, as the memory
 * store does; an extra is charged to it from a fresh state at now. Replies the number of charges.
 */
export const settleMainLua = `${clock}${loadAll}
local chargedAt = {}
for time in string.gmatch(ARGV[3], '%S+') do chargedAt[#chargedAt + 1] = tonumber(time) end
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local s = states[i]
  local charged, actual = tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
  if actual > charged or (actual < charged and s.stored) then
    settle(s.code, s.key, s, ${paramsOf('s')}, charged, actual, chargedAt[i] or chargedAt[1], now)
    s.dirty, s.stored = true, true
  end
end
${saveDirty}return n
`

/**
 * Refund: gives back each charge as the core's \`refund\` does, then reports every charge at cost
 * 0 (what is left now). ARGV[3] holds the times the charges were made, space-separated: one per
 * charge, or one for all.
 */
export const refundMainLua = `${clock}${loadAll}
local chargedAt = {}
for time in string.gmatch(ARGV[3], '%S+') do chargedAt[#chargedAt + 1] = tonumber(time) end
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local s = states[i]
  refund(s.code, s.key, s, ${paramsOf('s')}, tonumber(ARGV[base + 2]), chargedAt[i] or chargedAt[1], now)
  states[i].dirty = true
end
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  local at = i * 4 - 1
  reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('0', 'false')}
end
${saveDirty}${compactReply(false)}
`
