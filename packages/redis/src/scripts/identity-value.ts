/**
 * The identity layout (`layout: 'identity'`): the rules that key on one identity keep their
 * states in one Redis string under `<prefix>:{<identity>}`, read with one GET and written with
 * one SET per request, instead of a key per rule. The value is a run of entries, one per rule:
 *
 *   field (4-byte unsigned, little-endian: the rule's id hashed, see prepare.ts),
 *   deadline (6-byte unsigned ms on the Redis server's clock, which key expiries run on: when
 *   the state is fresh again, plus the expiry margin; with the caller's clock, the server's time
 *   plus the state's time to fresh, exactly the expiry a key of its own would get),
 *   the state's length (1 byte), the state (the string a key of its own would hold).
 *
 * Each entry carries its own freshness: one whose deadline has come (`deadline <= ` the server's
 * time, `expiryNow`) reads
 * as absent, as a key of its own would have expired then, and is left out when the value is
 * written again. The key itself expires with its longest-lived entry (the latest deadline),
 * so it is gone exactly when the last of its states is fresh. A state is dropped at its
 * deadline or later, never sooner: from the time it is fresh again it decides as a state never
 * seen, so dropping it loses nothing.
 *
 * Why one packed string and not a hash: a hash with a field per rule keeps one expiry for all
 * (per-field expiry needs Redis 7.4) and costs more bytes per identity than one string.
 *
 * Entries of rules not in the request (a route charging only some of the identity's rules)
 * are carried over as they are, the stale ones dropped.
 */
export const ENTRY = `'<I4I6Bc0'`

/**
 * The largest deadline an entry holds (6 bytes): far past any time the core accepts (2^42 ms),
 * so a deadline capped to it still keeps its state for every valid `now`.
 */
export const MAX_DEADLINE = 2 ** 48 - 1

/** The longest state an entry holds (its length is one byte). */
export const MAX_STATE_BYTES = 255

/**
 * Lua that reads the identity value under `key` into the locals v<i>, d<i> (state and deadline,
 * or nil) of the rules whose fields are given (constants), and keeps every other live entry in
 * `others` (packed, as read) with `latest` the latest of their deadlines. `expiryNow` (the
 * server's time) must be set.
 */
export function readIdentityLua(key: string, fields: readonly (readonly [number, number])[]) {
  const locals = fields.map(([i]) => `v${i}, d${i}`).join(', ')
  const match = fields
    .map(
      ([i, field], j) =>
        `${j === 0 ? 'if' : 'elseif'} field == ${field} then v${i}, d${i} = state, deadline`,
    )
    .join('\n          ')
  return `
  local ${locals}
  local others, latest, dirty = '', 0, false
  do
    local blob = redis.pcall('GET', ${key})
    -- Missing, or another type: no states.
    if type(blob) == 'string' then
      local at, size = 1, #blob
      while at <= size do
        local field, deadline, state
        field, deadline, state, at = struct.unpack(${ENTRY}, blob, at)
        if deadline > expiryNow then
          ${match}
          else
            others = others .. struct.pack(${ENTRY}, field, deadline, #state, state)
            if deadline > latest then latest = deadline end
          end
        end
      end
    end
  end`
}

/**
 * Lua that writes the identity value back when a state changed (`dirty`): the live states of
 * the rules given and the other entries, with the key's expiry at the latest deadline; a value
 * left with no entry is deleted.
 */
export function writeIdentityLua(key: string, fields: readonly (readonly [number, number])[]) {
  const add = fields
    .map(
      ([i, field]) => `
    if v${i} then
      out = out .. struct.pack(${ENTRY}, ${field}, d${i}, #v${i}, v${i})
      if d${i} > latest then latest = d${i} end
    end`,
    )
    .join('')
  return `
  if dirty then
    local out = others${add}
    if latest == 0 then
      redis.call('DEL', ${key})
    else
      redis.call('SET', ${key}, out, 'PXAT', format('%d', latest))
    end
  end`
}

/**
 * Lua that sets the state of rule `i` to `s` (its new deadline from `fresh`), or to none when
 * it is already fresh; the fragment's `format` is the state's string (or number).
 */
export function saveIdentityStateLua(
  i: number,
  format: string,
  marginMs: number,
  serverTime: boolean,
) {
  // On the server's clock expiryNow is now: the deadline is fresh's, plus the margin.
  const deadline = serverTime ? `fresh + ${marginMs}` : `fresh - now + ${marginMs} + expiryNow`
  return `dirty = true
    if fresh <= now then
      v${i} = nil
    else
      local value = ${format}
      if type(value) == 'number' then value = format('%d', value) end
      v${i}, d${i} = value, min(${deadline}, ${MAX_DEADLINE})
    end`
}

/**
 * The general scripts' part (assemble.ts): identity values read once per key and call, by key,
 * each entry's state and deadline by field (false: a state dropped by this call), and written
 * back once, after every charge, by `writeIdentities`.
 */
export const IDENTITY_LIBRARY_LUA = `
local identities, identityKeys = {}, {}
-- Whether now is the server's time (set by the caller's clock section), and the server's time
-- when it is not, read once, when an identity value is first met.
local absolute, serverMs = false, nil
local function expiryNow(now)
  if absolute then return now end
  if serverMs == nil then
    local t = redis.call('TIME')
    serverMs = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
  end
  return serverMs
end

local function identityValue(key, now)
  local value = identities[key]
  if value == nil then
    value = { states = {}, deadlines = {}, fields = {}, dirty = false }
    local blob = redis.pcall('GET', key)
    -- Missing, or another type: no states.
    if type(blob) == 'string' then
      local at, size, current = 1, #blob, expiryNow(now)
      while at <= size do
        local field, deadline, state
        field, deadline, state, at = struct.unpack(${ENTRY}, blob, at)
        if deadline > current and value.states[field] == nil then
          value.states[field], value.deadlines[field] = state, deadline
          value.fields[#value.fields + 1] = field
        end
      end
    end
    identities[key] = value
    identityKeys[#identityKeys + 1] = key
  end
  return value
end

-- Sets the state of \`field\` (a string or number; nil when fresh: dropped), fresh again at
-- \`fresh\` (on the clock of now), kept \`margin\` ms past it.
local function setIdentityState(key, field, value, fresh, margin, now)
  local identity = identityValue(key, now)
  if identity.states[field] == nil then identity.fields[#identity.fields + 1] = field end
  identity.dirty = true
  if value == nil then
    identity.states[field] = false
  else
    if type(value) == 'number' then value = format('%d', value) end
    local deadline = fresh - now + margin + expiryNow(now)
    identity.states[field], identity.deadlines[field] = value, min(deadline, ${MAX_DEADLINE})
  end
end

local function writeIdentities()
  for _, key in ipairs(identityKeys) do
    local identity = identities[key]
    if identity.dirty then
      local parts, latest = {}, 0
      for _, field in ipairs(identity.fields) do
        local state = identity.states[field]
        if state then
          local deadline = identity.deadlines[field]
          parts[#parts + 1] = struct.pack(${ENTRY}, field, deadline, #state, state)
          if deadline > latest then latest = deadline end
        end
      end
      if latest == 0 then
        redis.call('DEL', key)
      else
        redis.call('SET', key, table.concat(parts), 'PXAT', format('%d', latest))
      end
    end
  end
end
`
