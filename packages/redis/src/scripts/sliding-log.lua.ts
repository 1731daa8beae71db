import type { LuaAlgorithm } from './lua-algorithm.js'

/**
 * The most entries a log keeps packed in one string; a longer log becomes a Redis list.
 *
 * Why two forms: a packed log is read and rewritten whole, two commands per request, but the
 * bytes copied grow with its length; a list is read and written in place, O(log n) per request,
 * but each of its five or six commands costs script overhead. Measured here (Redis 7.0,
 * redis-benchmark, one-rule script, Redis's time per call, lower quartile of 8 runs): with one
 * or two entries per key packed 13.9 µs, list 17.2 (GCRA 12.5); with 0 to 33 entries (growing)
 * both 15.1–15.4. Most keys, even under a high limit, hold a short log, and a packed one takes
 * less memory at any length (8 bytes an entry, against about 10 in a listpack).
 */
const PACKED_LOG_MAX_ENTRIES = 32

/** A list that has shrunk to this many entries goes back to the packed form (hysteresis). */
const UNPACK_BELOW = PACKED_LOG_MAX_ENTRIES / 2

/** Entry `i` (0-based) of the packed log: tag byte, then one little-endian double per entry. */
const packedEntry = (i: string) => `struct.unpack('<d', packed, 2 + 8 * (${i}))`
const listEntry = (i: string, less = '') =>
  `(tonumber(redis.call('LINDEX', key, ${i}))${less && ` - ${less}`})`

/**
 * Moves a list the clock stepped back from (`load` left its shift in s[4]) in place: every entry
 * back by the shift, the newest to the time it was read at. Run first by each call that may write
 * the log; an inspection reads the entries shifted instead, and leaves the list as it is.
 */
const movePendingList = `
    local pending = s[4]
    if pending and pending > 0 then
      local entries = redis.call('LRANGE', key, 0, -1)
      redis.call('DEL', key)
      for j = 1, #entries do entries[j] = tonumber(entries[j]) - pending end
      for from = 1, #entries, 100 do
        redis.call('RPUSH', key, unpack(entries, from, min(#entries, from + 99)))
      end
      s[4] = 0
    end`

/** RPUSHes `count` copies of `value`, at most 100 arguments per call. */
const pushRepeated = (value: string, count: string) => `
        local left = ${count}
        while left > 0 do
          local batch = min(left, 100)
          local args = {}
          for j = 1, batch do args[j] = ${value} end
          redis.call('RPUSH', key, unpack(args))
          left = left - batch
        end`

/** Drops up to `cost` entries logged at `chargedAt`, if still inside the window (the core's `refund`). */
const refund = `${movePendingList}
    if chargedAt > now - windowMs and cost > 0 then
      local packed = s[3]
      if packed then
        -- Rebuild the string without up to \`cost\` entries logged at chargedAt.
        local kept, removed = {}, 0
        for j = 0, s[1] - 1 do
          local entry = ${packedEntry('j')}
          if removed < cost and entry == chargedAt then removed = removed + 1 else kept[#kept + 1] = entry end
        end
        if removed > 0 then
          s[1], s[2] = #kept, kept[#kept] or 0
          s[3] = '\\5' .. struct.pack('<' .. string.rep('d', #kept), unpack(kept))
        end
      else
        local removed = redis.call('LREM', key, cost, chargedAt)
        if removed > 0 then
          s[1] = s[1] - removed
          local last = redis.call('LINDEX', key, -1)
          if last then s[2] = tonumber(last) else s[2] = 0 end
        end
      end
    end`

/**
 * Sliding log (packages/core/src/algorithms/sliding-log.ts). The core keeps a ring of `limit`
 * timestamps; here the log is oldest first, one entry per admitted unit, in one of two forms:
 * - packed (up to PACKED_LOG_MAX_ENTRIES entries): one string, the tag byte 5 then each
 *   timestamp as a little-endian double, read with GET and written with SET (expiry included);
 * - a list, for longer logs (Redis packs lists of integers into a listpack), read entry by
 *   entry and trimmed and appended in place.
 * A log moves to a list when a commit would make it longer than the packed maximum, and back
 * when a commit leaves a list at half that or less.
 *
 * s = { length, newest entry (0 when empty), the packed string or false for a list }. A
 * decision reads only what it needs: a search for the first live entry (galloping from the
 * head, where the expired ones are) and, when denied, the entry that blocks the request.
 * Parameters: `limit` and `windowMs`. `v` is the GET reply: a string, false (no key) or an error table
 * (the key holds a list, or another type).
 */
export const slidingLogLua: LuaAlgorithm = {
  name: 'sliding_log',
  kind: 'window',
  code: 5,
  load: () => `
    local size, newest, packed = 0, 0, '\\5'
    if type(v) == 'string' then
      -- Anything but a packed log (another algorithm's state: a rule that changed) is no state.
      if #v % 8 == 1 and string.byte(v) == 5 then
        packed, size = v, (#v - 1) / 8
        if size > 0 then newest = ${packedEntry('size - 1')} end
      end
    elseif type(v) == 'table' then
      local length = redis.pcall('LLEN', key)
      if type(length) == 'number' then
        size, packed = length, false
        newest = ${listEntry('-1')}
      else
        redis.call('DEL', key)
      end
    end
    -- A newest entry beyond one window ahead: the clock stepped back. Every entry moves back by
    -- the same amount, the newest to now. A packed log is moved here (written by the caller's
    -- SET when a charge reads it); a list is moved in place by the first call that writes it
    -- (movePendingList), so that an inspection (cost 0) writes nothing, as the core's.
    local shift, pending = newest - now, 0
    if size > 0 and shift > windowMs then
      moved = true
      if packed then
        local entries = { struct.unpack('<' .. string.rep('d', size), packed, 2) }
        entries[size + 1] = nil
        for j = 1, size do entries[j] = entries[j] - shift end
        packed = '\\5' .. struct.pack('<' .. string.rep('d', size), unpack(entries))
      else
        pending = shift
      end
      newest = now
    end
    s = { size, newest, packed, pending }`,
  decide: `
    if cost > 0 then${movePendingList}
    end
    local size, newest, packed, shift = s[1], s[2], s[3], s[4] or 0
    local at = max(now, newest)
    -- Entries are in time order: count the leading ones that have aged out. A request usually
    -- finds none or one; gallop (entries 1, 2, 4, 8, …) then search the last step in halves.
    local cutoff = at - windowMs
    local lo, probe = 0, 1
    if packed then
      while probe <= size and ${packedEntry('probe - 1')} <= cutoff do
        lo = probe
        probe = probe * 2
      end
    elseif size > 0 then
      -- A list: its first two entries in one read.
      local head = redis.call('LRANGE', key, 0, 1)
      if tonumber(head[1]) - shift <= cutoff then
        lo, probe = 1, 2
        if head[2] and tonumber(head[2]) - shift <= cutoff then lo, probe = 2, 4 end
      end
      while probe > 2 and probe <= size and ${listEntry('probe - 1', 'shift')} <= cutoff do
        lo = probe
        probe = probe * 2
      end
    end
    local hi = min(probe - 1, size)
    while lo < hi do
      local mid = floorDiv(lo + hi, 2)
      local entry
      if packed then entry = ${packedEntry('mid')} else entry = ${listEntry('mid', 'shift')} end
      if entry <= cutoff then lo = mid + 1 else hi = mid end
    end
    local live = size - lo
    if cost > 0 and live + cost > limit then
      local blocking
      if packed then blocking = ${packedEntry('size + cost - limit - 1')} else blocking = ${listEntry('size + cost - limit - 1', 'shift')} end
      allowed, remaining, reset, retry = 0, max(0, limit - live), newest + windowMs - now, blocking + windowMs - now
    else
      -- An inspection (cost 0) changes nothing, the list kept in place included.
      if commit and cost > 0 then
        local after = live + cost
        if packed and after <= ${PACKED_LOG_MAX_ENTRIES} then
          -- The usual request expires nothing and adds one entry: one concatenation.
          local added = struct.pack('<d', at)
          if cost ~= 1 then added = string.rep(added, cost) end
          if lo == 0 then
            s[3] = packed .. added
          else
            s[3] = '\\5' .. string.sub(packed, 2 + 8 * lo) .. added
          end
        elseif packed then
          -- Too long to pack: the log becomes a list, live entries first.
          redis.call('DEL', key)
          if live > 0 then
            local entries = { struct.unpack('<' .. string.rep('d', live), packed, 2 + 8 * lo) }
            entries[live + 1] = nil -- unpack's last result is the position after the entries
            redis.call('RPUSH', key, unpack(entries))
          end${pushRepeated('at', 'cost')}
          s[3] = false
        elseif after <= ${UNPACK_BELOW} then
          -- Short again: back to one packed string (written by the caller's SET).
          local rest = {}
          if live > 0 then rest = redis.call('LRANGE', key, lo, -1) end
          for j = 1, cost do rest[live + j] = at end
          s[3] = '\\5' .. struct.pack('<' .. string.rep('d', after), unpack(rest))
        else
          if lo > 0 then redis.call('LTRIM', key, lo, -1) end${pushRepeated('at', 'cost')}
        end
        s[1] = after
        if cost > 0 then s[2] = at elseif after == 0 then s[2] = 0 end
      end
      local newestAfter = 0
      if cost > 0 then newestAfter = at elseif live > 0 then newestAfter = newest end
      reset = newestAfter + windowMs - now
      if live + cost == 0 then reset = 0 end
      allowed, remaining, retry = 1, max(0, limit - live - cost), 0
    end`,
  refund,
  // Fewer units: the refund's. More: `actual - charged` entries (a limit of them at most) logged
  // at the reservation while it is still inside the window, at now's time once it has aged out,
  // among the live entries in time order; the newest `limit` of them are kept (a log that full
  // refuses everything until its oldest kept entry ages out, as the longer log would). The log
  // is rewritten whole, packed or as a list by its new length.
  settle: `${movePendingList}
    if actual < charged then
      local cost = charged - actual${refund}
    else
      local size, packed = s[1], s[3]
      local at = max(now, s[2])
      local cutoff = at - windowMs
      local when = at
      if chargedAt > cutoff then when = min(chargedAt, at) end
      local entries = {}
      if packed and size > 0 then
        entries = { struct.unpack('<' .. string.rep('d', size), packed, 2) }
      elseif not packed then
        entries = redis.call('LRANGE', key, 0, -1)
      end
      local times, inserted = {}, false
      for j = 1, size + 1 do
        local time = math.huge
        if j <= size then time = tonumber(entries[j]) end
        if not inserted and time > when then
          for k = 1, min(actual - charged, limit) do times[#times + 1] = when end
          inserted = true
        end
        if j <= size and time > cutoff then times[#times + 1] = time end
      end
      local kept = min(#times, limit)
      local from = #times - kept
      if kept <= ${PACKED_LOG_MAX_ENTRIES} then
        -- Written by the caller's SET, which replaces a list too.
        s[3] = '\\5'
        if kept > 0 then s[3] = '\\5' .. struct.pack('<' .. string.rep('d', kept), unpack(times, from + 1, from + kept)) end
      else
        redis.call('DEL', key)
        for first = from + 1, from + kept, 100 do
          redis.call('RPUSH', key, unpack(times, first, min(from + kept, first + 99)))
        end
        s[3] = false
      end
      s[1] = kept
      s[2] = 0
      if kept > 0 then s[2] = times[from + kept] end
    end`,
  freshAt: `
    if s[1] == 0 then fresh = 0 else fresh = s[2] + windowMs end`,
  format: `s[3]`,
}
