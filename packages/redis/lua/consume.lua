-- tollgate: consume. KEYS: one per charge.
-- ARGV: now (-1: the server's TIME), expiry margin (ms), flag (0; 1: denied on another slot;
-- 2: also reply the time each charge was recorded at),
-- then per charge: algorithm code, cost, shadow (1/0), the algorithm's parameters
-- (rate: unitsPerMs, unitsPerToken, capacity, 0, 0; window: limit, windowMs, 0, 0, 0;
-- leaky_queue: unitsPerMs, unitsPerToken, capacity, delay in ticks, max wait in ticks or -1)
-- its field in the identity value under its key (0: a key of its own), and its carry
-- (-1: no version; else version × 4 + 0 keep, 1 proportional, 2 reset, 3 additive).
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

-- The state `v` (the string stored, or nil: a key never seen, init at now) of the algorithm
-- `code`, and whether it was moved to now (a clock that stepped back further than the rule's
-- reset span): a moved state is written back whatever the decision.
local function parse(code, key, v, p1, p2, p3, p4, p5, now)
  local s, moved = nil, false
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
        newest = (tonumber(redis.call('LINDEX', key, -1)))
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
        packed = '\5' .. struct.pack('<' .. string.rep('d', size), unpack(entries))
      else
        pending = shift
      end
      newest = now
    end
    s = { size, newest, packed, pending }
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
  return s, moved
end

local function decide(code, key, s, p1, p2, p3, p4, p5, cost, now, commit)
  local allowed, remaining, reset, retry
  if code == 1 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local level = capacity
    if elapsed < fullMs then level = min(capacity, s[1] + elapsed * unitsPerMs) end
    local need = cost * unitsPerToken
    -- Cost 0 only inspects: it passes even on a bucket in debt (below empty, after a settle).
    if level < need and cost > 0 then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(level, unitsPerToken)), skew - floorDiv(level - capacity, unitsPerMs), skew - floorDiv(level - need, unitsPerMs)
    else
      local left = level - need
      if commit then s[1] = left; s[2] = at end
      reset = 0
      if left ~= capacity then reset = skew - floorDiv(left - capacity, unitsPerMs) end
      allowed, remaining, retry = 1, max(0, floorDiv(left, unitsPerToken)), 0
    end
  elseif code == 2 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local aheadMs, aheadTicks
    if split then
      aheadMs, aheadTicks = s[1] - now, s[2]
    else
      local ticks = s[1] - now * unitsPerMs
      aheadMs = floorDiv(ticks, unitsPerMs)
      aheadTicks = ticks - aheadMs * unitsPerMs
    end
    if aheadMs < 0 then aheadMs, aheadTicks = 0, 0 end
    local need = cost * unitsPerToken
    local resetMs = aheadMs
    if aheadTicks > 0 then resetMs = aheadMs + 1 end
    local ticks = nil
    if aheadMs <= fillMs then ticks = aheadMs * unitsPerMs + aheadTicks end
    local fits = ticks ~= nil and ticks <= capacity - need
    if cost > 0 and not fits then
      local left = 0
      if ticks ~= nil and ticks <= capacity then left = floorDiv(capacity - ticks, unitsPerToken) end
      allowed, remaining, reset, retry = 0, left, resetMs, aheadMs - floorDiv(capacity - aheadTicks - need, unitsPerMs)
    elseif not fits then
      allowed, remaining, reset, retry = 1, 0, resetMs, 0
    else
      local after = ticks + need
      -- ceil(after / unitsPerMs) from the floor and what is left over: one division, not two.
      local afterMs = floorDiv(after, unitsPerMs)
      local afterTicks = after - afterMs * unitsPerMs
      if commit then
        aheadMs, aheadTicks = afterMs, afterTicks
    if split then s[1], s[2] = now + aheadMs, aheadTicks else s[1] = (now + aheadMs) * unitsPerMs + aheadTicks end
      end
      if afterTicks > 0 then afterMs = afterMs + 1 end
      allowed, remaining, reset, retry = 1, floorDiv(capacity - after, unitsPerToken), afterMs, 0
    end
  elseif code == 3 then
    local unitsPerMs, unitsPerToken, capacity = p1, p2, p3
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local at = max(now, s[2])
    local skew = at - now
    local elapsed = at - s[2]
    local water = 0
    if elapsed < fullMs then water = max(0, s[1] - elapsed * unitsPerMs) end
    local poured = water + cost * unitsPerToken
    if cost > 0 and poured > capacity then
      allowed, remaining, reset, retry = 0, max(0, floorDiv(capacity - water, unitsPerToken)), skew - floorDiv(-water, unitsPerMs), skew - floorDiv(capacity - poured, unitsPerMs)
    else
      if commit then s[1] = poured; s[2] = at end
      reset = 0
      if poured ~= 0 then reset = skew - floorDiv(-poured, unitsPerMs) end
      allowed, remaining, retry = 1, max(0, floorDiv(capacity - poured, unitsPerToken)), 0
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
    local start, untilEnd
    if calendar == 0 then
      -- The stored window while it lasts; then now's, or the one following on from the stored
      -- one's end when now's began before it (a window moved off the boundaries).
      local storedEnd = stored + windowMs
      if now < storedEnd then start = stored
      elseif nowStart >= storedEnd then start = nowStart
      else start = storedEnd end
      untilEnd = start + windowMs - now
    else
      start = max(nowStart, stored)
      if start == nowStart then untilEnd = nowEnd - now
      else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
        untilEnd = (start < windowMs and windowMs or (start < b2 and b2 or (start == b2 and b3 or start + 2 * (b3 - b2)))) - now
      end
    end
    local count = 0
    if start == stored then count = s[2] end
    if cost > 0 and count + cost > limit then
      allowed, remaining, reset, retry = 0, max(0, limit - count), untilEnd, untilEnd
    else
      local charged = count + cost
      if commit then s[1] = start; s[2] = charged end
      reset = untilEnd
      if charged == 0 then reset = 0 end
      allowed, remaining, retry = 1, max(0, limit - charged), 0
    end
  elseif code == 5 then
    local limit, windowMs = p1, p2
    if cost > 0 then
    local pending = s[4]
    if pending and pending > 0 then
      local entries = redis.call('LRANGE', key, 0, -1)
      redis.call('DEL', key)
      for j = 1, #entries do entries[j] = tonumber(entries[j]) - pending end
      for from = 1, #entries, 100 do
        redis.call('RPUSH', key, unpack(entries, from, min(#entries, from + 99)))
      end
      s[4] = 0
    end
    end
    local size, newest, packed, shift = s[1], s[2], s[3], s[4] or 0
    local at = max(now, newest)
    -- Entries are in time order: count the leading ones that have aged out. A request usually
    -- finds none or one; gallop (entries 1, 2, 4, 8, …) then search the last step in halves.
    local cutoff = at - windowMs
    local lo, probe = 0, 1
    if packed then
      while probe <= size and struct.unpack('<d', packed, 2 + 8 * (probe - 1)) <= cutoff do
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
      while probe > 2 and probe <= size and (tonumber(redis.call('LINDEX', key, probe - 1)) - shift) <= cutoff do
        lo = probe
        probe = probe * 2
      end
    end
    local hi = min(probe - 1, size)
    while lo < hi do
      local mid = floorDiv(lo + hi, 2)
      local entry
      if packed then entry = struct.unpack('<d', packed, 2 + 8 * (mid)) else entry = (tonumber(redis.call('LINDEX', key, mid)) - shift) end
      if entry <= cutoff then lo = mid + 1 else hi = mid end
    end
    local live = size - lo
    if cost > 0 and live + cost > limit then
      local blocking
      if packed then blocking = struct.unpack('<d', packed, 2 + 8 * (size + cost - limit - 1)) else blocking = (tonumber(redis.call('LINDEX', key, size + cost - limit - 1)) - shift) end
      allowed, remaining, reset, retry = 0, max(0, limit - live), newest + windowMs - now, blocking + windowMs - now
    else
      -- An inspection (cost 0) changes nothing, the list kept in place included.
      if commit and cost > 0 then
        local after = live + cost
        if packed and after <= 32 then
          -- The usual request expires nothing and adds one entry: one concatenation.
          local added = struct.pack('<d', at)
          if cost ~= 1 then added = string.rep(added, cost) end
          if lo == 0 then
            s[3] = packed .. added
          else
            s[3] = '\5' .. string.sub(packed, 2 + 8 * lo) .. added
          end
        elseif packed then
          -- Too long to pack: the log becomes a list, live entries first.
          redis.call('DEL', key)
          if live > 0 then
            local entries = { struct.unpack('<' .. string.rep('d', live), packed, 2 + 8 * lo) }
            entries[live + 1] = nil -- unpack's last result is the position after the entries
            redis.call('RPUSH', key, unpack(entries))
          end
        local left = cost
        while left > 0 do
          local batch = min(left, 100)
          local args = {}
          for j = 1, batch do args[j] = at end
          redis.call('RPUSH', key, unpack(args))
          left = left - batch
        end
          s[3] = false
        elseif after <= 16 then
          -- Short again: back to one packed string (written by the caller's SET).
          local rest = {}
          if live > 0 then rest = redis.call('LRANGE', key, lo, -1) end
          for j = 1, cost do rest[live + j] = at end
          s[3] = '\5' .. struct.pack('<' .. string.rep('d', after), unpack(rest))
        else
          if lo > 0 then redis.call('LTRIM', key, lo, -1) end
        local left = cost
        while left > 0 do
          local batch = min(left, 100)
          local args = {}
          for j = 1, batch do args[j] = at end
          redis.call('RPUSH', key, unpack(args))
          left = left - batch
        end
        end
        s[1] = after
        if cost > 0 then s[2] = at elseif after == 0 then s[2] = 0 end
      end
      local newestAfter = 0
      if cost > 0 then newestAfter = at elseif live > 0 then newestAfter = newest end
      reset = newestAfter + windowMs - now
      if live + cost == 0 then reset = 0 end
      allowed, remaining, retry = 1, max(0, limit - live - cost), 0
    end
  elseif code == 6 then
    local limit, windowMs, buckets = p1, p2, p3
    if buckets > 0 then
      local width = windowMs / buckets
      local newest = s[1] / width
      local at = max(floorDiv(now, width), newest)
      local oldest = max(at - buckets + 1, newest - buckets + 1)
      local sum = 0
      for m = oldest, newest do sum = sum + s[2 + (m) - floorDiv(m, buckets) * buckets] end
      local fresh
      if cost > 0 and sum + cost > limit then
        local m = oldest
        local expiring = sum + cost - limit - s[2 + (m) - floorDiv(m, buckets) * buckets]
        while expiring > 0 do
          m = m + 1
          expiring = expiring - s[2 + (m) - floorDiv(m, buckets) * buckets]
        end
        
      fresh = 0
      for m = newest, oldest, -1 do
        if s[2 + (m) - floorDiv(m, buckets) * buckets] > 0 then fresh = (m + buckets) * width; break end
      end
        allowed, remaining, reset, retry = 0, max(0, limit - sum), fresh - now, (m + buckets) * width - now
      else
        if commit and cost > 0 then
          for m = max(newest + 1, at - buckets + 1), at do s[2 + (m) - floorDiv(m, buckets) * buckets] = 0 end
          s[1] = at * width
          s[2 + (at) - floorDiv(at, buckets) * buckets] = s[2 + (at) - floorDiv(at, buckets) * buckets] + cost
        end
        if cost > 0 then fresh = (at + buckets) * width else 
      fresh = 0
      for m = newest, oldest, -1 do
        if s[2 + (m) - floorDiv(m, buckets) * buckets] > 0 then fresh = (m + buckets) * width; break end
      end
        end
        reset = 0
        if fresh > 0 then reset = fresh - now end
        allowed, remaining, retry = 1, max(0, limit - sum - cost), 0
      end
    else
    local budget = limit * windowMs
    local stored = s[1]
    local start = max(floorDiv(now, windowMs) * windowMs, stored)
    local previous, current = 0, 0
    if start == stored then
      previous, current = s[2], s[3]
    elseif start == stored + windowMs then
      previous = s[3]
    end
    local at = max(now, start)
    local overlap = windowMs - (at - start)
    local used = previous * overlap + current * windowMs
    if cost > 0 and used + cost * windowMs > budget then
      if current > 0 then reset = start + 2 * windowMs elseif previous > 0 then reset = start + windowMs else reset = 0 end
      local retryAt = nil
      local room = (limit - current - cost) * windowMs
      if room >= 0 and previous > 0 then
        local elapsed = windowMs - floorDiv(room, previous)
        if elapsed < windowMs then retryAt = start + elapsed end
      end
      if retryAt == nil then
        if current == 0 then
          retryAt = start + windowMs
        else
          retryAt = start + windowMs + max(0, windowMs - floorDiv((limit - cost) * windowMs, current))
        end
      end
      allowed, remaining, reset, retry = 0, max(0, floorDiv(budget - used, windowMs)), reset - now, retryAt - now
    else
      local charged = current + cost
      if commit then s[1] = start; s[2] = previous; s[3] = charged end
      if charged > 0 then reset = start + 2 * windowMs elseif previous > 0 then reset = start + windowMs else reset = 0 end
      allowed, remaining, reset, retry = 1, max(0, floorDiv(budget - used - cost * windowMs, windowMs)), max(0, reset - now), 0
    end
    end
  elseif code == 7 then
    local unitsPerMs, unitsPerToken, capacity, delayTicks, maxWaitTicks = p1, p2, p3, p4, p5
local fillMs, fullMs = -floorDiv(-capacity, unitsPerMs), -floorDiv(-2 * capacity, unitsPerMs)
local split = ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991)
    local ahead = max(0, s[1] - now * unitsPerMs)
    if cost == 0 then
      allowed, remaining, reset, retry = 1, (ahead >= (capacity + unitsPerToken) and 0 or min(floorDiv(capacity, unitsPerToken) + 1, floorDiv((capacity + unitsPerToken) - ahead, unitsPerToken))), -floorDiv(-ahead, unitsPerMs), -1
    else
      local slot = ahead + (cost - 1) * unitsPerToken
      local wait = max(0, slot - delayTicks)
      if slot > capacity or (maxWaitTicks >= 0 and wait > maxWaitTicks) then
        local untilRoom = slot - capacity
        if maxWaitTicks >= 0 then untilRoom = max(untilRoom, wait - maxWaitTicks) end
        allowed, remaining, reset, retry = 0, (ahead >= (capacity + unitsPerToken) and 0 or min(floorDiv(capacity, unitsPerToken) + 1, floorDiv((capacity + unitsPerToken) - ahead, unitsPerToken))), -floorDiv(-ahead, unitsPerMs), -floorDiv(-untilRoom, unitsPerMs)
      else
        local after = ahead + cost * unitsPerToken
        if commit then s[1] = now * unitsPerMs + after end
        allowed, remaining, reset, retry = 1, (after >= (capacity + unitsPerToken) and 0 or min(floorDiv(capacity, unitsPerToken) + 1, floorDiv((capacity + unitsPerToken) - after, unitsPerToken))), -floorDiv(-after, unitsPerMs), -floorDiv(-wait, unitsPerMs)
      end
    end
  elseif code == 8 then
    local limit, retryAfterMs, leaseMs, owner, lease = p1, p2, p3, p4, p5
    local held = s[1]
    if cost > 0 and held + cost > limit then
      allowed, remaining, reset, retry = 0, max(0, limit - held), retryAfterMs, retryAfterMs
    else
      if commit and cost > 0 then
        local ends = format('%d', now + leaseMs)
      local done, count = 0, 0
      while done < cost do
        local batch, args = min(cost - done, 100), {}
        for j = 1, batch do args[2 * j - 1], args[2 * j] = ends, format('%d:%d:%d', owner, lease, done + j) end
        count = count + redis.call('ZADD', key, unpack(args))
        done = done + batch
      end
        s[1] = held + cost
      end
      allowed, remaining, reset, retry = 1, max(0, limit - held - cost), 0, 0
    end
  end
  return allowed, remaining, reset, retry
end

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

-- The amount used under the new figures from `used` under the old (the core's carriedUse).
local function carriedUse(strategy, used, fromFull, fromPer, toFull, toPer)
  if strategy == 2 or used <= 0 then return 0 end
  if strategy == 1 then return min(toFull, scaledUp(used, toFull, fromFull)) end
  local same = scaledUp(used, toPer, fromPer)
  if strategy == 0 then return min(same, 2 * toFull) end
  return min(same, toFull)
end

-- A rate rule's amount used at now, in scaled units (the core's rateUse.usedAt).
local function rateUsed(code, s, unitsPerMs, capacity, now)
  local fill = -floorDiv(-capacity, unitsPerMs)
  if code == 2 then
    local ahead
    if ((4398046511104 + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs > 9007199254740991) then ahead = (s[1] - now) * unitsPerMs + s[2] else ahead = s[1] - now * unitsPerMs end
    if ahead > (2 * fill + 1) * unitsPerMs then return capacity end
    return max(0, ahead)
  end
  local last = s[2]
  if last - now > fill then last = now end
  local elapsed = max(now, last) - last
  if elapsed >= -floorDiv(-2 * capacity, unitsPerMs) then return 0 end
  if code == 1 then return capacity - min(capacity, s[1] + elapsed * unitsPerMs) end
  return max(0, s[1] - elapsed * unitsPerMs)
end

-- A state under (code, p…) at now holding `used` (the core's withUse).
local function withUse(code, key, used, p1, p2, p3, p4, p5, now)
  if code == 2 then
    if not ((4398046511104 + 2) * p1 + 2 * p3 + 4 * p1 > 9007199254740991) then return { now * p1 + used } end
    local ms = floorDiv(used, p1)
    return { now + ms, used - ms * p1 }
  end
  if code == 1 or code == 3 then
    local at = now - floorDiv(-max(0, used - p3), p1)
    if code == 3 then return { min(used, p3), at } end
    return { max(0, p3 - used), at }
  end
  local s = parse(code, key, nil, p1, p2, p3, p4, p5, now)
  if code == 4 then s[2] = used
  elseif p3 == 0 then s[3] = used
  else decide(code, key, s, p1, p2, p3, p4, p5, min(used, p1), now, true) end
  return s
end

local function isRate(code) return code == 1 or code == 2 or code == 3 end

-- The state s under (from, q…) carried into (code, p…) at now by strategy, or nil: fresh (a
-- reset, nothing used, or algorithms with no exact conversion).
local function carryState(from, key, s, q1, q2, q3, q4, q5, code, p1, p2, p3, p4, p5, strategy, now)
  local used, fromFull, fromPer, toFull, toPer
  if isRate(from) and isRate(code) then
    used, fromFull, fromPer, toFull, toPer = rateUsed(from, s, q1, q3, now), q3, q2, p3, p2
  elseif from == code and code == 4 and q3 == 0 and p3 == 0 then
    used = 0
    if now < s[1] + q2 then used = s[2] end
    fromFull, fromPer, toFull, toPer = q1, 1, p1, 1
  elseif from == code and code == 6 then
    local _, remaining = decide(from, key, s, q1, q2, q3, q4, q5, 0, now, false)
    used, fromFull, fromPer, toFull, toPer = q1 - remaining, q1, 1, p1, 1
  else
    return nil
  end
  local carried = carriedUse(strategy, used, fromFull, fromPer, toFull, toPer)
  if carried == 0 then return nil end
  return withUse(code, key, carried, p1, p2, p3, p4, p5, now)
end

-- The state of one key (or of `field` in the identity value under `key`, when not 0) for a
-- charge of (code, p…) whose carry argument is `cv` (carry.lua.ts): whether it was moved to
-- now (written back whatever the decision); whether a state was stored (what a settle gives
-- units back to); whether it was carried from other figures (written back even at cost 0); and
-- the version it is written under (-1: none); and when a newer version wrote it, the figures
-- it is decided and written under, its own ({ code, p1, …, p5 }), else nil: the charge's.
local function load(code, key, field, p1, p2, p3, p4, p5, now, cv)
  local v = nil
  if field ~= 0 then
    v = identityValue(key, now).states[field] or nil
  -- A concurrency key holds a sorted set of leases, which its branch reads itself.
  elseif code ~= 8 then
    v = redis.pcall('GET', key)
    -- Missing, or another type (a rule that changed algorithm): no state. The sliding log tells
    -- the error of a key that holds a list (its long form) from a missing key.
    if code ~= 5 and type(v) ~= 'string' then v = nil end
  end
  local ver, carried, adopted, sc, sv, q1, q2, q3, q4, q5 = -1, false, nil
  if cv >= 0 then ver = floor(cv / 4) end
  -- The length first: most states are shorter than a header, and cost no call to string.byte.
  if type(v) == 'string' and #v > 50 and string.byte(v) == 86 then
    sc, sv, q1, q2, q3, q4, q5 = struct.unpack('<Bdddddd', v, 2)
    v = string.sub(v, 51)
    if sv > ver and (cv >= 0 or sc == code) then
      code, p1, p2, p3, p4, p5, ver = sc, q1, q2, q3, q4, q5, sv
      adopted = { sc, q1, q2, q3, q4, q5 }
    elseif cv < 0 then
      -- Another algorithm's, to a rule without a version: no state, as a plain one would be.
      v = nil
    elseif sc ~= code or q1 ~= p1 or q2 ~= p2 or q3 ~= p3 or q4 ~= p4 or q5 ~= p5 then
      carried = true
    end
  end
  -- A state of one number is kept as a double in the identity value (identity-value.ts).
  local from = code
  if carried then from = sc end
  if field ~= 0 and v and #v == 8 and (from == 2 or from == 7) then
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
-- '%.17g' Redis would print a number with. A state of a version (`ver` ≥ 0) starts with its
-- figures (carry.lua.ts).
local function save(code, key, field, s, p1, p2, p3, p4, p5, now, absolute, margin, ver)
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
      if ver >= 0 then
        if type(value) == 'number' then value = struct.pack('<d', value) end
        value = string.char(86) .. struct.pack('<Bdddddd', code, ver, p1, p2, p3, p4, p5) .. value
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
  if value and ver >= 0 then value = string.char(86) .. struct.pack('<Bdddddd', code, ver, p1, p2, p3, p4, p5) .. value end
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

local denied = ARGV[3] == '1'
if n == 1 and not denied then
  -- One charge (most requests): applyCharges reduces to one decision, written only if allowed.
  local p1, p2, p3, p4, p5 = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  -- The key and algorithm code travel as arguments, not as fields of `s`: fields beside the
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
  if code == 8 and s[2] > 0 then
    local sent = { now, allowed, remaining, reset }
    if allowed ~= 1 then sent[5] = retry end
    if ARGV[3] == '2' then sent[#sent + 1] = now end
    sent[#sent + 1] = s[2]
    return sent
  end
  if ARGV[3] == '2' then
    local t = now
    if code == 4 or code == 6 then t = s[1] elseif code == 5 then t = s[2] end
    if allowed == 1 and code ~= 7 then return { now, 1, remaining, reset, t } end
    return { now, allowed, remaining, reset, retry, t }
  end
  if allowed == 1 and code ~= 7 then return { now, 1, remaining, reset } end
  return { now, allowed, remaining, reset, retry }
end

local reply = { now, 0 }
local states, byKey, distinct = {}, {}, {}
for i = 1, n do
  local base = (i - 1) * 10 + 3
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
-- The dry run of a charge on a key charged earlier in the request counts the earlier charges
-- that passed too, so that a commit never finds the room gone: the request is all or nothing.
-- Cost -1: with the charges before it on its key, beyond the limit (never passes): denied, with
-- what is left and a retry no sooner than the key is whole.
local spent = {}
for i = 1, n do
  local base = (i - 1) * 10 + 3
  local at = i * 4 - 1
  local cost = tonumber(ARGV[base + 2])
  if cost < 0 then
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = decide(states[i].code, states[i].key, states[i], (states[i].q and states[i].q[2] or tonumber(ARGV[base + 4])), (states[i].q and states[i].q[3] or tonumber(ARGV[base + 5])), (states[i].q and states[i].q[4] or tonumber(ARGV[base + 6])), (states[i].q and states[i].q[5] or tonumber(ARGV[base + 7])), (states[i].q and states[i].q[6] or tonumber(ARGV[base + 8])), 0, now, false)
    reply[at], reply[at + 3] = 0, reply[at + 2]
  else
    cost = (spent[states[i]] or 0) + cost
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = decide(states[i].code, states[i].key, states[i], (states[i].q and states[i].q[2] or tonumber(ARGV[base + 4])), (states[i].q and states[i].q[3] or tonumber(ARGV[base + 5])), (states[i].q and states[i].q[4] or tonumber(ARGV[base + 6])), (states[i].q and states[i].q[5] or tonumber(ARGV[base + 7])), (states[i].q and states[i].q[6] or tonumber(ARGV[base + 8])), cost, now, false)
  end
  if reply[at] == 1 then
    spent[states[i]] = cost
  elseif ARGV[base + 3] ~= '1' then
    denied = true
  end
end
for i = 1, n do
  local base = (i - 1) * 10 + 3
  local at = i * 4 - 1
  if reply[at] == 1 then
    if denied then
      reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = decide(states[i].code, states[i].key, states[i], (states[i].q and states[i].q[2] or tonumber(ARGV[base + 4])), (states[i].q and states[i].q[3] or tonumber(ARGV[base + 5])), (states[i].q and states[i].q[4] or tonumber(ARGV[base + 6])), (states[i].q and states[i].q[5] or tonumber(ARGV[base + 7])), (states[i].q and states[i].q[6] or tonumber(ARGV[base + 8])), 0, now, false)
    else
      reply[at], reply[at + 1], reply[at + 2], reply[at + 3] = decide(states[i].code, states[i].key, states[i], (states[i].q and states[i].q[2] or tonumber(ARGV[base + 4])), (states[i].q and states[i].q[3] or tonumber(ARGV[base + 5])), (states[i].q and states[i].q[4] or tonumber(ARGV[base + 6])), (states[i].q and states[i].q[5] or tonumber(ARGV[base + 7])), (states[i].q and states[i].q[6] or tonumber(ARGV[base + 8])), tonumber(ARGV[base + 2]), now, true)
      if ARGV[base + 2] ~= '0' then states[i].dirty = true end
      -- Passed the dry run, denied on commit: an earlier charge on the same key took the room.
      if reply[at] == 0 then reply[at] = 2 end
    end
  end
end

for _, s in ipairs(distinct) do
  if s.dirty then
    local base = (s.i - 1) * 10 + 3
    save(s.code, s.key, tonumber(ARGV[base + 9]), s, (s.q and s.q[2] or tonumber(ARGV[base + 4])), (s.q and s.q[3] or tonumber(ARGV[base + 5])), (s.q and s.q[4] or tonumber(ARGV[base + 6])), (s.q and s.q[5] or tonumber(ARGV[base + 7])), (s.q and s.q[6] or tonumber(ARGV[base + 8])), now, absolute, margin, s.ver)
  end
end
writeIdentities()

local sent, retries = { now }, {}
for i = 1, n do
  local at = i * 4 - 1
  sent[i * 3 - 1], sent[i * 3], sent[i * 3 + 1] = reply[at], reply[at + 1], reply[at + 2]
  if reply[at] ~= 1 or states[i].code == 7 then retries[#retries + 1] = reply[at + 3] end
end
for j = 1, #retries do sent[3 * n + 1 + j] = retries[j] end
if ARGV[3] == '2' then
  for i = 1, n do
    local t = now
    if states[i].code == 4 or states[i].code == 6 then t = states[i][1] elseif states[i].code == 5 then t = states[i][2] end
    sent[#sent + 1] = t
  end
end
-- The units each concurrency load swept (ended leases: a process that died or stalled holding
-- them), at the first charge on its key, end the reply when any were swept: most calls sweep
-- nothing and send nothing more. The store counts them as expired, once each.
local swept = false
for _, s in ipairs(distinct) do
  if s.code == 8 and s[2] > 0 then swept = true end
end
if swept then
  for i = 1, n do
    local s = states[i]
    if s.code == 8 and s.i == i then sent[#sent + 1] = s[2] else sent[#sent + 1] = 0 end
  end
end
return sent
