import { serverNowLua } from './server-time.lua.js'

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
const ENTRY = `'<I4I6Bc0'`

/**
 * The largest deadline an entry holds (6 bytes): far past any time the core accepts (2^42 ms),
 * so a deadline capped to it still keeps its state for every valid `now`.
 */
const MAX_DEADLINE = 2 ** 48 - 1

/** The longest state an entry holds (its length is one byte). */
export const MAX_STATE_BYTES = 255

/** A rule of a rule-set script whose state lives in the identity value. */
export type IdentityRule = {
  /** Its index in the rule set (1-based): its state is v<i> (or x<i>_1 …), its deadline d<i>. */
  readonly i: number
  readonly field: number
  readonly state: IdentityState
}

/**
 * How a rule-set script keeps a rule's state while it runs, and in its entry:
 * - `number`: one number (GCRA's TAT, the queue's next slot), kept in the entry as a
 *   little-endian double (8 bytes, exact below 2^53) and read back as a number into v<i>;
 * - `slots`: a packed state (packed-state.ts), the tag byte then `slots` doubles, unpacked
 *   with the entry straight into the locals x<i>_1 … (the first nil: no state, or another
 *   algorithm's tag) and packed from them with the entry: no string of its own is made or
 *   read (each costs Redis a `struct` call and a string to intern, about 2,500 instructions per
 *   rule and request);
 * - `bytes`: the packed string of `bytes` bytes its own key would hold, in v<i> (a sliding
 *   window's sub-window counters: up to 31 numbers, too many for locals).
 */
export type IdentityState =
  | { readonly kind: 'number' }
  | { readonly kind: 'slots'; readonly tag: number; readonly slots: number }
  | { readonly kind: 'bytes'; readonly bytes: number }

/** The locals holding rule `rule`'s slots while the script runs (a `slots` state). */
export const slotNames = ({ i, state }: IdentityRule): readonly string[] =>
  state.kind === 'slots' ? Array.from({ length: state.slots }, (_, j) => `x${i}_${j + 1}`) : []

/** The local that is nil when rule `rule` has no state. */
const present = (rule: IdentityRule) =>
  rule.state.kind === 'slots' ? `x${rule.i}_1` : `v${rule.i}`

/** The locals of rule `rule`'s state and deadline. */
const stateLocals = (rule: IdentityRule) =>
  rule.state.kind === 'slots'
    ? `${slotNames(rule).join(', ')}, d${rule.i}`
    : `v${rule.i}, d${rule.i}`

/** The length byte of rule `rule`'s entry, where it is fixed (not for a `bytes` state written). */
const stateLength = ({ state }: IdentityRule) =>
  state.kind === 'number' ? 8 : state.kind === 'slots' ? 1 + 8 * state.slots : state.bytes

/** The struct format of rule `rule`'s entry as written, and the values packed into it. */
function entryOf(rule: IdentityRule): { readonly format: string; readonly values: string } {
  const { i, field, state } = rule
  if (state.kind === 'number') return { format: 'I4I6Bd', values: `${field}, d${i}, 8, v${i}` }
  if (state.kind === 'bytes') return { format: 'I4I6Bc0', values: `${field}, d${i}, #v${i}, v${i}` }
  return {
    format: `I4I6BB${'d'.repeat(state.slots)}`,
    values: `${field}, d${i}, ${stateLength(rule)}, ${state.tag}, ${slotNames(rule).join(', ')}`,
  }
}

/**
 * Lua that reads the identity value under `key` into the locals of the rules given (their
 * states, see IdentityState, and deadlines d<i>), and keeps every other live entry in `others`
 * (packed, as read) with `latest` the latest of their deadlines. `expiryNow` (the server's
 * time) must be set.
 *
 * The value a request of these rules wrote holds their entries alone, in order, at a length
 * known here: one `struct.unpack` reads them all. Any other value (another request's rules
 * beside them, a state dropped) is read entry by entry.
 */
export function readIdentityLua(key: string, rules: readonly IdentityRule[]) {
  const locals = rules.map(stateLocals).join(', ')
  const length = rules.reduce((sum, rule) => sum + 11 + stateLength(rule), 0)
  // Fixed sizes, so that a value of this length unpacks whatever it holds; the fields and
  // lengths then tell whether it holds these rules' entries.
  const read = rules.map((rule) => {
    const { i, state } = rule
    if (state.kind !== 'slots') {
      return {
        format: state.kind === 'number' ? 'I4I6Bd' : `I4I6Bc${state.bytes}`,
        names: `f${i}, e${i}, n${i}, w${i}`,
        take: `if e${i} > expiryNow then v${i}, d${i} = w${i}, e${i} end`,
      }
    }
    const read = slotNames(rule).map((name) => `w${name.slice(1)}`)
    return {
      format: `I4I6BB${'d'.repeat(state.slots)}`,
      names: `f${i}, e${i}, n${i}, g${i}, ${read.join(', ')}`,
      take: `if e${i} > expiryNow and g${i} == ${state.tag} then ${stateLocals(rule)} = ${read.join(', ')}, e${i} end`,
    }
  })
  const inOrder = rules
    .map((rule) => `f${rule.i} == ${rule.field} and n${rule.i} == ${stateLength(rule)}`)
    .join(' and ')
  const match = rules
    .map((rule, j) => `${j === 0 ? 'if' : 'elseif'} field == ${rule.field} then${entryState(rule)}`)
    .join('\n            ')
  return `
  local ${locals}
  local others, latest, dirty = '', 0, false
  do
    local blob = redis.pcall('GET', ${key})
    -- Missing: no states. Another type (an error table) has length 0: no states either.
    if not blob then blob = '' end
    local read = false
    if #blob == ${length} then
      local ${read.map((r) => r.names).join(', ')} = struct.unpack('<${read.map((r) => r.format).join('')}', blob)
      if ${inOrder} then${read.map((r) => `\n          ${r.take}`).join('')}
        read = true
      end
    end
    if not read then
      local at, size = 1, #blob
      -- Bytes that are no entry (a value left by something else) end the reading: no states.
      while at + 10 <= size do
        local field, deadline, length = struct.unpack('<I4I6B', blob, at)
        local stop = at + 11 + length
        if stop > size + 1 then break end
        local state = string.sub(blob, at + 11, stop - 1)
        at = stop
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

/** Lua taking rule `rule`'s state from `state`, an entry read on its own, with its `deadline`. */
function entryState(rule: IdentityRule): string {
  const { i, state } = rule
  if (state.kind === 'bytes') return ` v${i}, d${i} = state, deadline`
  if (state.kind === 'number') {
    return `\n              if #state == 8 then v${i}, d${i} = struct.unpack('<d', state), deadline end`
  }
  const slots = slotNames(rule).join(', ')
  return `
              if #state == ${stateLength(rule)} then
                local tag
                tag, ${slots} = struct.unpack('<B${'d'.repeat(state.slots)}', state)
                if tag == ${state.tag} then d${i} = deadline else x${i}_1 = nil end
              end`
}

/**
 * Lua that writes the identity value back when a state changed (`dirty`): the live states of
 * the rules given and the other entries, with the key's expiry at the latest deadline; a value
 * left with no entry is deleted. With every state live and no other entry (the usual request),
 * one `struct.pack` makes the whole value.
 */
export function writeIdentityLua(key: string, rules: readonly IdentityRule[]) {
  const all = rules.map(present).join(' and ')
  const entries = rules.map(entryOf)
  const deadlines = rules.map(({ i }) => `d${i}`)
  // The latest deadline by comparisons in the VM: `max` is a C call, several times the cost.
  const latest = deadlines
    .slice(1)
    .map((d) => `\n      if ${d} > latest then latest = ${d} end`)
    .join('')
  const add = rules
    .map(
      (rule, j) => `
      if ${present(rule)} then
        out = out .. struct.pack('<${entries[j]!.format}', ${entries[j]!.values})
        if d${rule.i} > latest then latest = d${rule.i} end
      end`,
    )
    .join('')
  return `
  if dirty then
    local out
    if others == '' and ${all} then
      out = struct.pack('<${entries.map((e) => e.format).join('')}', ${entries.map((e) => e.values).join(', ')})
      latest = ${deadlines[0]}${latest}
    else
      out = others${add}
    end
    if latest == 0 then
      redis.call('DEL', ${key})
    else
      redis.call('SET', ${key}, out, 'PXAT', format('%d', latest))
    end
  end`
}

/**
 * Lua that sets the state of rule `rule` to `s` (its new deadline from `fresh`), or to none
 * when it is already fresh; `format` is the algorithm's expression for the state's string (or
 * number), not used for a `slots` state, whose slots are taken from `s` as they are.
 */
export function saveIdentityStateLua(
  rule: IdentityRule,
  format: string,
  marginMs: number,
  serverTime: boolean,
) {
  // On the server's clock expiryNow is now: the deadline is fresh's, plus the margin.
  const deadline = serverTime ? `fresh + ${marginMs}` : `fresh - now + ${marginMs} + expiryNow`
  const value =
    rule.state.kind === 'slots'
      ? slotNames(rule)
          .map((_, j) => `s[${j + 1}]`)
          .join(', ')
      : format
  return `dirty = true
    if fresh <= now then
      ${present(rule)} = nil
    else
      local deadline = ${deadline}
      if deadline > ${MAX_DEADLINE} then deadline = ${MAX_DEADLINE} end
      ${stateLocals(rule)} = ${value}, deadline
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
    ${serverNowLua('serverMs')}
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
      -- Bytes that are no entry (a value left by something else) end the reading: no states.
      while at + 10 <= size do
        local field, deadline, length = struct.unpack('<I4I6B', blob, at)
        local stop = at + 11 + length
        if stop > size + 1 then break end
        local state = string.sub(blob, at + 11, stop - 1)
        at = stop
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
    -- One number (GCRA's TAT, the queue's next slot): a double, as the rule-set scripts keep it.
    if type(value) == 'number' then value = struct.pack('<d', value) end
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
