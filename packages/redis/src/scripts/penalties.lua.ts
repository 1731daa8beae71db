import {
  ARGS_PER_CHARGE,
  clock,
  compactReply,
  decideAll,
  decideCharge,
  loadAll,
  saveDirty,
  saveStates,
} from './main.lua.js'

/**
 * The penalties script: `consume` with penalties (`Store.consumePenalised`) and the operator's
 * calls (`peek`, `reset`, `block`, `unblock`), the server-side twin of the core's memory store
 * (packages/core/src/store/memory-penalties.ts and penalty-book.ts), tested against it by
 * test/stores/redis-penalties-differential.test.ts.
 *
 * KEYS: one per charge (its state's key, as for consume), then one per charge: the key holding
 * its offences. ARGV as consume's (now, margin, mode, then 9 per charge), then per charge:
 * PENALTY_ARGS_PER_CHARGE entries (see `penaltyArgs` in penalised-call.ts).
 *
 * A key's offences under a rule are one record, three doubles packed (`<ddd`: count, blocked
 * until, forget at; exact below 2^53), kept beside the rule's state and apart from it, so that
 * they outlive its expiry: with `layout: 'identity'` an entry of the identity value (its own
 * field, its deadline the forget time: the value's expiry covers both), with `layout: 'rule'` a
 * key of its own, `<state key>:offences` (the same hash tag: the same slot), expiring at the
 * forget time plus the margin. A record whose forget time has come reads as none.
 */
const PENALTY_ARGS_PER_CHARGE = 7

/** ARGV[3]: what the call does (a consume's flags '0', '1', '2' otherwise, as consume's). */
export const PENALTY_MODES = {
  peek: 'peek',
  reset: 'reset',
  block: 'block',
  unblock: 'unblock',
} as const

export const penaltiesHeaderLua = `-- tollgate: penalties. KEYS: one per charge (its state), then one per charge (its offences).
-- ARGV: now (-1: the server's TIME), expiry margin (ms), mode (consume's flag 0, 1 or 2;
-- or peek, reset, block, unblock: one charge), then per charge as consume's: algorithm code,
-- cost, shadow (1/0), the algorithm's parameters and its field in the identity value;
-- then per charge: the cost asked, block ms (-1: no penalty), factor, max block ms,
-- forget after ms, the offences' field in the identity value (0: a key of their own),
-- and the end of an operator's block.`

/** The Lua reading and writing offence records, and a penalty's block lengths. */
const offencesLua = `
n = n / 2
local mode = ARGV[3]
local function penaltyArg(i, j)
  return tonumber(ARGV[3 + n * ${ARGS_PER_CHARGE} + (i - 1) * ${PENALTY_ARGS_PER_CHARGE} + j])
end

-- Offence records by place (key and field), read once per call: a request that penalises one
-- key twice counts both offences, as the memory store's book does. false: none remembered.
local records = {}
local function offencesOf(i)
  local key, field = KEYS[n + i], penaltyArg(i, 6)
  local place = key .. ' ' .. field
  local record = records[place]
  if record == nil then
    local stored
    if field ~= 0 then stored = identityValue(key, now).states[field] else stored = redis.pcall('GET', key) end
    record = false
    if type(stored) == 'string' and #stored == 24 then
      local count, blockedUntil, forgetAt = struct.unpack('<ddd', stored)
      if forgetAt > now then record = { count, blockedUntil, forgetAt } end
    end
    records[place] = record
  end
  return record
end

-- Writes charge i's record (false, or forgotten by now: dropped), expiring when forgotten.
local function writeOffences(i, record)
  local key, field = KEYS[n + i], penaltyArg(i, 6)
  if record and record[3] <= now then record = false end
  records[key .. ' ' .. field] = record
  local packed = record and struct.pack('<ddd', record[1], record[2], record[3])
  if field ~= 0 then
    setIdentityState(key, field, packed or nil, record and record[3] or now, margin, now)
  elseif not record then
    redis.call('DEL', key)
  elseif absolute then
    redis.call('SET', key, packed, 'PXAT', format('%d', record[3] + margin))
  else
    redis.call('SET', key, packed, 'PX', format('%d', record[3] - now + margin))
  end
end

-- The block of the count-th offence: block × factor^(count - 1), at most the max (the core's
-- blockLengthMs: multiplied step by step and stopped at the cap, so every product is exact).
local function blockLength(i, count)
  local ms, factor, most = penaltyArg(i, 2), penaltyArg(i, 3), penaltyArg(i, 4)
  local k = 1
  while k < count and factor > 1 and ms < most do
    ms = ms * factor
    k = k + 1
  end
  if ms > most then ms = most end
  return ms
end
`

/** The operator's writes, on one charge: its state in KEYS[1], its offences in KEYS[2]. */
const operatorWritesLua = `
if mode == '${PENALTY_MODES.reset}' or mode == '${PENALTY_MODES.block}' or mode == '${PENALTY_MODES.unblock}' then
  if mode == '${PENALTY_MODES.reset}' then
    local field = tonumber(ARGV[12])
    if field ~= 0 then setIdentityState(KEYS[1], field, nil, now, margin, now) else redis.call('DEL', KEYS[1]) end
    writeOffences(1, false)
  elseif mode == '${PENALTY_MODES.unblock}' then
    writeOffences(1, false)
  else
    -- Blocked until the given time whatever its count (kept, or 0), forgotten as an offence's.
    local record, blockedUntil = offencesOf(1), penaltyArg(1, 7)
    writeOffences(1, { record and record[1] or 0, blockedUntil, blockedUntil + penaltyArg(1, 5) })
  end
  writeIdentities()
  return now
end
`

/**
 * Peek and the penalised consume: the offences of penalised charges read first. A peek, or a
 * request an enforcing penalised charge's block refuses, writes nothing and reports each charge
 * as a denied request's (a charge that would pass at cost 0, one that would not as its denial);
 * otherwise the charges are decided as consume decides them, and each enforcing penalised charge
 * denied records an offence. The reply is consume's, then whether a block refused the request
 * (1/0) and per charge its offences: count (-1: none) and blocked until.
 */
const penalisedMainLua = `${loadAll}
local offences, blocked = {}, mode == '${PENALTY_MODES.peek}'
for i = 1, n do
  local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
  if penaltyArg(i, 2) >= 0 then
    offences[i] = offencesOf(i)
    if offences[i] and offences[i][2] > now and ARGV[base + 3] ~= '1' then blocked = true end
  end
end
if blocked then
  for i = 1, n do
    local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
    local at = i * 4 - 1
    local cost = penaltyArg(i, 1)
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('cost', 'false')}
    if reply[at] == 1 and cost > 0 then
      reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = ${decideCharge('0', 'false')}
    end
  end
  -- Nothing is charged, but a state carried into new figures is kept as carried (as the memory
  -- store's look keeps it), so that the next call finds it as this one did.
  ${saveStates('s.carried')}
else
  local denied = mode == '1'
  ${decideAll}
  for i = 1, n do
    local base = (i - 1) * ${ARGS_PER_CHARGE} + 3
    if penaltyArg(i, 2) >= 0 and reply[i * 4 - 1] ~= 1 and ARGV[base + 3] ~= '1' then
      local record = offencesOf(i)
      local count = (record and record[1] or 0) + 1
      local blockedUntil = now + blockLength(i, count)
      record = { count, blockedUntil, blockedUntil + penaltyArg(i, 5) }
      writeOffences(i, record)
      offences[i] = record
    end
  end
  ${saveDirty}
end
${compactReply(
  true,
  `if blocked and mode ~= '${PENALTY_MODES.peek}' then sent[#sent + 1] = 1 else sent[#sent + 1] = 0 end
for i = 1, n do
  local record = offences[i]
  if record then
    sent[#sent + 1] = record[1]
    sent[#sent + 1] = record[2]
  else
    sent[#sent + 1] = -1
    sent[#sent + 1] = 0
  end
end
`,
)}
`

export const penaltiesMainLua = `${clock}${offencesLua}${operatorWritesLua}${penalisedMainLua}`
