-- tollgate: settle. KEYS: one per charge.
-- ARGV: now (-1: the server's TIME), expiry margin (ms), the time the charges were made,
-- then per charge: algorithm code, units charged, actual cost, the algorithm's parameters
-- (rate: unitsPerMs, unitsPerToken, capacity, 0, 0; window: limit, windowMs, 0, 0, 0;
-- leaky_queue: unitsPerMs, unitsPerToken, capacity, delay in ticks, max wait in ticks or -1)
-- and its field in the identity value under its key (0: a key of its own).
local floor, max, min, format = math.floor, math.max, math.min, string.format
local function floorDiv(a, b)
  -- a % b is computed inside the VM (a - floor(a / b) * b, every step exact below 2^53), so
  -- this is floor(a / b) without a call to math.floor, whose C call costs more than the rest.
  local q = (a - a % b) / b
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end

local identities, identityKeys = {}, {}
-- Whether now is the server's time (set by the caller's clock section), and the server's time
-- when it is not, read once, when an identity value is first met.
local absolute, serverMs = false, nil
local function expiryNow(now)
  if absolute then return now end
  if serverMs == nil then
    local t = redis.call('TIME')
local u = t[2] + 0
serverMs = t[1] * 1000 + (u - u % 1000) / 1000
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

-- Sets the state of `field` (a string or number; nil when fresh: dropped), fresh again at
-- `fresh` (on the clock of now), kept `margin` ms past it.
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
    identity.states[field], identity.deadlines[field] = value, min(deadline, 281474976710655)
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
          parts[#parts + 1] = struct.pack('<I4I6Bc0', field, deadline, #state, state)
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

-- The state of one key (or of `field` in the identity value under `key`, when not 0), or the
-- state of a key never seen (init at now), whether it was moved to now (a clock that stepped
-- back further than the rule's reset span): a moved state is written back whatever the
-- decision; and for a settle, whether a state was stored (what it gives units back to).
local function load(code, key, field, p1, p2, p3, p4, p5, now)
  local s, moved, v = nil, false, nil
  if field ~= 0 then
    v = identityValue(key, now).states[field] or nil
    -- A state of one number is kept as a double (identity-value.ts).
    if v and #v == 8 and (code == 2 or code == 7) then
      v = struct.unpack('<d', v)
    end
  -- A concurrency key holds a sorted set of leases, which its branch reads itself.
  elseif code ~= 8 then
    v = redis.pcall('GET', key)
    -- Missing, or another type (a rule that changed algorithm): no state. The sliding log tells
    -- the error of a key that holds a list (its long form) from a missing key.
    if code ~= 5 and type(v) ~= 'string' then v = nil end
  end
  if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local a, b
    if v and #v == 17 then
      local tag
      tag, a, b = struct.unpack('<Bdd', v)
      if tag ~= 1 then a = nil end
    end
    if a then
      s = { a, b }
      -- A last refill beyond a fill time ahead: the clock stepped back; move it to now.
      if b - now > fillMs then s[2] = now; moved = true end
    else
      s = { capacity, now }
    end
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    if split then
      local a, b
    if v and #v == 17 then
      local tag
      tag, a, b = struct.unpack('<Bdd', v)
      if tag ~= 2 then a = nil end
    end
      if a then s = { a, b } else s = { now, 0 } end
    else
      local tat = nil
      if v then tat = tonumber(v) end
      if tat then s = { tat } else s = { now * unitsPerMs } end
    end
    -- More than two fill times ahead (whole ms): the clock stepped back; a drained bucket at
    -- now. Told without a division: a TAT in ticks is more than 2 × fillMs whole ms ahead when
    -- it is at least (2 × fillMs + 1) ms of ticks ahead (exact: both sides stay below 2^53
    -- wherever the TAT is one number).
    if (split and s[1] - now > 2 * fillMs) or (not split and s[1] - now * unitsPerMs >= (2 * fillMs + 1) * unitsPerMs) then
      local aheadMs = floorDiv(capacity, unitsPerMs)
      local aheadTicks = capacity - aheadMs * unitsPerMs
      
    if split then s[1], s[2] = now + aheadMs, aheadTicks else s[1] = (now + aheadMs) * unitsPerMs + aheadTicks end
      moved = true
    end
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local a, b
    if v and #v == 17 then
      local tag
      tag, a, b = struct.unpack('<Bdd', v)
      if tag ~= 3 then a = nil end
    end
    if a then
      s = { a, b }
      -- A last leak beyond a drain time ahead: the clock stepped back; move it to now.
      if b - now > fillMs then s[2] = now; moved = true end
    else
      s = { 0, now }
    end
  elseif code == 4 then
    local limit, windowMs, calendar = p1, p2, p3
    local nowStart, nowEnd
    if calendar == 0 then
      nowStart = floorDiv(now, windowMs) * windowMs
      nowEnd = nowStart + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      nowStart = now < b2 and windowMs or b2
      nowEnd = (nowStart < windowMs and windowMs or (nowStart < b2 and b2 or (nowStart == b2 and b3 or nowStart + 2 * (b3 - b2))))
    end
    local a, b
    if v and #v == 17 then
      local tag
      tag, a, b = struct.unpack('<Bdd', v)
      if tag ~= 4 then a = nil end
    end
    if a then
      s = { a, b }
      -- More than a window ahead of now: the clock stepped back. The count moves into a window
      -- starting at now (a calendar window: into the window after now's).
      if calendar == 0 then
        if a - now > windowMs then s[1] = now; moved = true end
      elseif a > nowEnd then s[1] = nowEnd; moved = true end
    else
      s = { nowStart, 0 }
    end
  elseif code == 5 then
    local limit, windowMs = p1, p2
    local size, newest, packed = 0, 0, '\5'
    if type(v) == 'string' then
      -- Anything but a packed log (another algorithm's state: a rule that changed) is no state.
      if #v % 8 == 1 and string.byte(v) == 5 then
        packed, size = v, (#v - 1) / 8
        if size > 0 then newest = struct.unpack('<d', packed, 2 + 8 * (size - 1)) end
      end
    elseif type(v) == 'table' then
      local length = redis.pcall('LLEN', key)
      if type(length) == 'number' then
        size, packed = length, false
        newest = tonumber(redis.call('LINDEX', key, -1))
      else
        redis.call('DEL', key)
      end
    end
    -- A newest entry beyond one window ahead: the clock stepped back. Every entry moves back by
    -- the same amount, the newest to now (rewritten in place: a rare, whole-log change).
    local shift = newest - now
    if size > 0 and shift > windowMs then
      moved = true
      local entries
      if packed then
        entries = { struct.unpack('<' .. string.rep('d', size), packed, 2) }
        entries[size + 1] = nil
      else
        entries = redis.call('LRANGE', key, 0, -1)
        redis.call('DEL', key)
      end
      for j = 1, size do entries[j] = tonumber(entries[j]) - shift end
      if packed then
        packed = '\5' .. struct.pack('<' .. string.rep('d', size), unpack(entries))
      else
        for from = 1, size, 100 do
          redis.call('RPUSH', key, unpack(entries, from, min(size, from + 99)))
        end
      end
      newest = now
    end
    s = { size, newest, packed }
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3
    if buckets > 0 then
      local width = windowMs / buckets
      if v and #v == 9 + 8 * buckets then
        local t = { struct.unpack('<B' .. string.rep('d', buckets + 1), v) }
        if t[1] == 70 then
          s = {}
          for j = 1, buckets + 1 do s[j] = t[j + 1] end
        end
      end
      if s then
        local newest, nowIndex = s[1] / width, floorDiv(now, width)
        if (newest - nowIndex) * width > windowMs then
          local counts = {}
          for j = 0, buckets - 1 do counts[j] = s[2 + (newest - j) - floorDiv(newest - j, buckets) * buckets] end
          for j = 0, buckets - 1 do s[2 + (nowIndex - j) - floorDiv(nowIndex - j, buckets) * buckets] = counts[j] end
          s[1] = nowIndex * width
          moved = true
        end
      else
        s = { floorDiv(now, width) * width }
        for j = 2, buckets + 1 do s[j] = 0 end
      end
    else
    local a, b, c
    if v and #v == 25 then
      local tag
      tag, a, b, c = struct.unpack('<Bddd', v)
      if tag ~= 6 then a = nil end
    end
    if a then
      s = { a, b, c }
      -- More than two windows (the reset span) ahead of now: the clock stepped back; both counts
      -- move into now's current window, where they weigh in full.
      if a - now > 2 * windowMs then
        s[1], s[2], s[3] = floorDiv(now, windowMs) * windowMs, 0, b + c
        moved = true
      end
    else
      s = { floorDiv(now, windowMs) * windowMs, 0, 0 }
    end
    end
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local slot = nil
    if v then slot = tonumber(v) end
    if slot then s = { slot } else s = { now * unitsPerMs } end
    -- Further ahead than the key is held for: the clock stepped back; a full line at now.
    if s[1] - now * unitsPerMs >= (2 * -floorDiv(-(capacity + unitsPerToken), unitsPerMs) + 1) * unitsPerMs then
      s[1] = now * unitsPerMs + (capacity + unitsPerToken)
      moved = true
    end
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5
    -- Leases that have ended (a process that died holding them) free their slots; s[2] tells
    -- the caller how many units this load removed, so that each is counted once.
    local swept = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', format('%d', now))
    -- Another type (a rule that changed algorithm): no state.
    if type(swept) ~= 'number' then
      redis.call('DEL', key)
      swept = 0
    end
    s = { redis.call('ZCARD', key), swept }
  end
  return s, moved, v ~= nil and v ~= false
end

local function settle(code, key, s, p1, p2, p3, p4, p5, charged, actual, chargedAt, now)
  if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    if actual < charged then
      local cost = charged - actual
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local level = capacity
    if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    s[1] = min(capacity, level + cost * unitsPerToken)
    s[2] = at
    else
      local base = min(chargedAt, now)
      if s[2] < base then
        local elapsed = base - s[2]
        local level = capacity
        if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
        s[1], s[2] = level, base
      end
      s[1] = max(-capacity, s[1] - min(actual - charged, 2 * capacity / unitsPerToken + 1) * unitsPerToken)
    end
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    if actual < charged then
      local cost = charged - actual
    local aheadMs, aheadTicks
    if split then
      aheadMs, aheadTicks = s[1] - now, s[2]
    else
      local ticks = s[1] - now * unitsPerMs
      aheadMs = floorDiv(ticks, unitsPerMs)
      aheadTicks = ticks - aheadMs * unitsPerMs
    end
    if aheadMs < 0 then aheadMs, aheadTicks = 0, 0 end
    local units = -cost * unitsPerToken
    local ms = floorDiv(units, unitsPerMs)
    aheadMs = aheadMs + ms
    aheadTicks = aheadTicks + units - ms * unitsPerMs
    if aheadTicks >= unitsPerMs then aheadMs, aheadTicks = aheadMs + 1, aheadTicks - unitsPerMs end
    if aheadMs < 0 then aheadMs, aheadTicks = 0, 0 end
    if split then s[1], s[2] = now + aheadMs, aheadTicks else s[1] = (now + aheadMs) * unitsPerMs + aheadTicks end
    elseif split then
      local base = min(chargedAt, now)
      local ms, ticks = s[1] - base, s[2]
      if ms < 0 then ms, ticks = 0, 0 end
      local boundMs = floorDiv(2 * capacity, unitsPerMs)
      if ms <= boundMs + 1 then
        local room = (boundMs - ms) * unitsPerMs + (2 * capacity - boundMs * unitsPerMs) - ticks
        if room > 0 then
          local extra = min(actual - charged, -floorDiv(-room, unitsPerToken)) * unitsPerToken
          local total = ticks + min(room, extra)
          local carried = floorDiv(total, unitsPerMs)
          s[1], s[2] = base + ms + carried, total - carried * unitsPerMs
        end
      end
    else
      local base = min(chargedAt, now) * unitsPerMs
      local tat = max(s[1], base)
      local room = base + 2 * capacity - tat
      if room > 0 then
        local extra = min(actual - charged, -floorDiv(-room, unitsPerToken)) * unitsPerToken
        s[1] = tat + min(room, extra)
      end
    end
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    if actual < charged then
      local cost = charged - actual
    local at = max(now, s[2])
    local elapsed = at - s[2]
    local water = 0
    if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
    s[1] = max(0, water - cost * unitsPerToken)
    s[2] = at
    else
      local base = min(chargedAt, now)
      if s[2] < base then
        local elapsed = base - s[2]
        local water = 0
        if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
        s[1], s[2] = water, base
      end
      s[1] = min(2 * capacity, s[1] + min(actual - charged, 2 * capacity / unitsPerToken + 1) * unitsPerToken)
    end
  elseif code == 4 then
    local limit, windowMs, calendar = p1, p2, p3
    local nowStart, nowEnd
    if calendar == 0 then
      nowStart = floorDiv(now, windowMs) * windowMs
      nowEnd = nowStart + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      nowStart = now < b2 and windowMs or b2
      nowEnd = (nowStart < windowMs and windowMs or (nowStart < b2 and b2 or (nowStart == b2 and b3 or nowStart + 2 * (b3 - b2))))
    end
    local stored = s[1]
    local storedEnd, charging
    if calendar == 0 then
      storedEnd = stored + windowMs
      charging = chargedAt >= stored and chargedAt < storedEnd
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      storedEnd = (stored < windowMs and windowMs or (stored < b2 and b2 or (stored == b2 and b3 or stored + 2 * (b3 - b2))))
      charging = chargedAt == stored
    end
    if now < storedEnd and charging then
      s[2] = max(0, s[2] + actual - charged)
    elseif actual > charged then
      local start = stored
      if now >= storedEnd then start = max(nowStart, storedEnd) end
      local count = 0
      if start == stored then count = s[2] end
      s[1], s[2] = start, count + actual - charged
    end
  elseif code == 5 then
    local limit, windowMs = p1, p2
    if actual < charged then
      local cost = charged - actual
    if chargedAt > now - windowMs and cost > 0 then
      local packed = s[3]
      if packed then
        -- Rebuild the string without up to `cost` entries logged at chargedAt.
        local kept, removed = {}, 0
        for j = 0, s[1] - 1 do
          local entry = struct.unpack('<d', packed, 2 + 8 * (j))
          if removed < cost and entry == chargedAt then removed = removed + 1 else kept[#kept + 1] = entry end
        end
        if removed > 0 then
          s[1], s[2] = #kept, kept[#kept] or 0
          s[3] = '\5' .. struct.pack('<' .. string.rep('d', #kept), unpack(kept))
        end
      else
        local removed = redis.call('LREM', key, cost, chargedAt)
        if removed > 0 then
          s[1] = s[1] - removed
          local last = redis.call('LINDEX', key, -1)
          if last then s[2] = tonumber(last) else s[2] = 0 end
        end
      end
    end
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
      if kept <= 32 then
        -- Written by the caller's SET, which replaces a list too.
        s[3] = '\5'
        if kept > 0 then s[3] = '\5' .. struct.pack('<' .. string.rep('d', kept), unpack(times, from + 1, from + kept)) end
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
    end
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3
    if buckets > 0 then
      local width = windowMs / buckets
      local index = floorDiv(chargedAt, width)
      local from = s[1] / width
      local at = max(floorDiv(now, width), from)
      if index > from and index <= at then
        for m = max(from + 1, index - buckets + 1), index do s[2 + (m) - floorDiv(m, buckets) * buckets] = 0 end
        s[1] = index * width
      end
      local newest = s[1] / width
      if index <= newest and index > at - buckets then
        local i = 2 + (index) - floorDiv(index, buckets) * buckets
        s[i] = max(0, s[i] + actual - charged)
      elseif actual > charged then
        for m = max(newest + 1, at - buckets + 1), at do s[2 + (m) - floorDiv(m, buckets) * buckets] = 0 end
        s[1] = at * width
        s[2 + (at) - floorDiv(at, buckets) * buckets] = s[2 + (at) - floorDiv(at, buckets) * buckets] + actual - charged
      end
    else
    local chargedStart = floorDiv(chargedAt, windowMs) * windowMs
    if chargedStart > s[1] and chargedAt <= now then
      local carried = 0
      if chargedStart == s[1] + windowMs then carried = s[3] end
      s[1], s[2], s[3] = chargedStart, carried, 0
    end
    local stored = s[1]
    local current = max(floorDiv(now, windowMs) * windowMs, stored)
    local index = 0
    if chargedStart == stored and current <= stored + windowMs then
      index = 3
    elseif chargedStart == stored - windowMs and current == stored then
      index = 2
    end
    if index ~= 0 then
      s[index] = max(0, s[index] + actual - charged)
    elseif actual > charged then
      local previous, count = 0, 0
      if current == stored then
        previous, count = s[2], s[3]
      elseif current == stored + windowMs then
        previous = s[3]
      end
      s[1], s[2], s[3] = current, previous, count + actual - charged
    end
    end
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5
  end
end


local function freshAt(code, key, s, p1, p2, p3, p4, p5)
  local fresh
  if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    if split then
      fresh = s[1]
      if s[2] > 0 then fresh = fresh + 1 end
    else
      fresh = -floorDiv(-s[1], unitsPerMs)
    end
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    fresh = s[2] - floorDiv(-s[1], unitsPerMs)
  elseif code == 4 then
    local limit, windowMs, calendar = p1, p2, p3
    if calendar == 0 then fresh = s[1] + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      fresh = (s[1] < windowMs and windowMs or (s[1] < b2 and b2 or (s[1] == b2 and b3 or s[1] + 2 * (b3 - b2))))
    end
  elseif code == 5 then
    local limit, windowMs = p1, p2
    if s[1] == 0 then fresh = 0 else fresh = s[2] + windowMs end
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3
    if buckets > 0 then
      local width = windowMs / buckets
      local newest = s[1] / width
      
      fresh = 0
      for m = newest, newest - buckets + 1, -1 do
        if s[2 + (m) - floorDiv(m, buckets) * buckets] > 0 then fresh = (m + buckets) * width; break end
      end
    else
    if s[3] > 0 then fresh = s[1] + 2 * windowMs elseif s[2] > 0 then fresh = s[1] + windowMs else fresh = 0 end
    end
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    fresh = -floorDiv(-s[1], unitsPerMs)
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5
    fresh = 0
    if s[1] > 0 then
      local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
      if last[2] then fresh = tonumber(last[2]) end
    end
  end
  return fresh
end

-- Writes a changed state with an expiry at the moment it is fresh again (dropping it then loses
-- nothing), plus a margin; a state that is already fresh is deleted instead. With the server's
-- clock the deadline is absolute (PXAT), so it agrees with TIME to the ms. Whole numbers below
-- 2^53 go to redis.call as decimal text made by format('%d'): exact, and far cheaper than the
-- '%.17g' Redis would print a number with.
local function save(code, key, field, s, p1, p2, p3, p4, p5, now, absolute, margin)
  local fresh = freshAt(code, key, s, p1, p2, p3, p4, p5)
  if field ~= 0 then
    -- Kept in the identity value, written once by writeIdentities.
    local value = nil
    if fresh > now then
      if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = struct.pack('<Bdd', 1, s[1], s[2])
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = (split and struct.pack('<Bdd', 2, s[1], s[2]) or s[1])
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = struct.pack('<Bdd', 3, s[1], s[2])
  elseif code == 4 then
    local limit, windowMs, calendar = p1, p2, p3 value = struct.pack('<Bdd', 4, s[1], s[2])
  elseif code == 5 then
    local limit, windowMs = p1, p2 value = s[3]
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3 value = (buckets > 0 and struct.pack('<B' .. string.rep('d', buckets + 1), 70, unpack(s, 1, buckets + 1)) or struct.pack('<Bddd', 6, s[1], s[2], s[3]))
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = s[1]
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5 value = false
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
  if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = struct.pack('<Bdd', 1, s[1], s[2])
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = (split and struct.pack('<Bdd', 2, s[1], s[2]) or s[1])
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = struct.pack('<Bdd', 3, s[1], s[2])
  elseif code == 4 then
    local limit, windowMs, calendar = p1, p2, p3 value = struct.pack('<Bdd', 4, s[1], s[2])
  elseif code == 5 then
    local limit, windowMs = p1, p2 value = s[3]
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3 value = (buckets > 0 and struct.pack('<B' .. string.rep('d', buckets + 1), 70, unpack(s, 1, buckets + 1)) or struct.pack('<Bddd', 6, s[1], s[2], s[3]))
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) value = s[1]
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5 value = false
  end
  if type(value) == 'number' then value = format('%d', value) end
  if value then
    redis.call('SET', key, value, mode, deadline)
  elseif absolute then
    -- A sliding log kept as a list, or a set of leases, already written in place.
    redis.call('PEXPIREAT', key, deadline)
  else
    redis.call('PEXPIRE', key, deadline)
  end
end

-- `absolute` is the library's (identity-value.ts): whether now is the server's time.
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
local u = t[2] + 0
now = t[1] * 1000 + (u - u % 1000) / 1000
  absolute = true
end
local margin = tonumber(ARGV[2])
local n = #KEYS

local reply = { now, 0 }
local states, byKey, distinct = {}, {}, {}
for i = 1, n do
  local base = (i - 1) * 9 + 3
  local key = KEYS[i]
  local place = key
  if ARGV[base + 9] ~= '0' then place = key .. ' ' .. ARGV[base + 9] end
  local s = byKey[place]
  if s == nil then
    local code = tonumber(ARGV[base + 1])
    local moved, stored
    s, moved, stored = load(code, key, tonumber(ARGV[base + 9]), tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), now)
    -- `stored`: a settle's load only (nil otherwise).
    s.code, s.key, s.i, s.dirty, s.moved, s.stored = code, key, i, false, moved, stored
    byKey[place] = s
    distinct[#distinct + 1] = s
  end
  -- A moved state is written whatever the decision, unless only inspections (cost 0) read it.
  if s.moved and ARGV[base + 2] ~= '0' then s.dirty = true end
  states[i] = s
end

local chargedAt = {}
for time in string.gmatch(ARGV[3], '%S+') do chargedAt[#chargedAt + 1] = tonumber(time) end
for i = 1, n do
  local base = (i - 1) * 9 + 3
  local s = states[i]
  local charged, actual = tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
  if actual > charged or (actual < charged and s.stored) then
    settle(s.code, s.key, s, tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), charged, actual, chargedAt[i] or chargedAt[1], now)
    s.dirty, s.stored = true, true
  end
end

for _, s in ipairs(distinct) do
  if s.dirty then
    local base = (s.i - 1) * 9 + 3
    save(s.code, s.key, tonumber(ARGV[base + 9]), s, tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]), tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), now, absolute, margin)
  end
end
writeIdentities()
return n
