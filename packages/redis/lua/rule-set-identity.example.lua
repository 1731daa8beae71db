-- tollgate: a request charging token_bucket, fixed_window
local max, min, format = math.max, math.min, string.format
local function floorDiv(a, b)
  -- a % b is computed inside the VM (a - floor(a / b) * b, every step exact below 2^53), so
  -- this is floor(a / b) without a call to math.floor, whose C call costs more than the rest.
  local q = (a - a % b) / b
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
local t = redis.call('TIME')
local u = t[2] + 0
local now = t[1] * 1000 + (u - u % 1000) / 1000
local reply, w = { now, nil, nil, nil, nil, nil, nil }, 1
local expiryNow = now
do
  local r = 0
  local k, base = r, r * 2
  local x1_1, x1_2, d1, x2_1, x2_2, d2
  local others, latest, dirty = '', 0, false
  do
    local blob = redis.pcall('GET', KEYS[k + 1])
    -- Missing: no states. Another type (an error table) has length 0: no states either.
    if not blob then blob = '' end
    local read = false
    if #blob == 56 then
      local f1, e1, n1, g1, w1_1, w1_2, f2, e2, n2, g2, w2_1, w2_2 = struct.unpack('<I4I6BBddI4I6BBdd', blob)
      if f1 == 4266708676 and n1 == 17 and f2 == 2680620807 and n2 == 17 then
          if e1 > expiryNow and g1 == 1 then x1_1, x1_2, d1 = w1_1, w1_2, e1 end
          if e2 > expiryNow and g2 == 4 then x2_1, x2_2, d2 = w2_1, w2_2, e2 end
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
          if field == 4266708676 then
              if #state == 17 then
                local tag
                tag, x1_1, x1_2 = struct.unpack('<Bdd', state)
                if tag == 1 then d1 = deadline else x1_1 = nil end
              end
            elseif field == 2680620807 then
              if #state == 17 then
                local tag
                tag, x2_1, x2_2 = struct.unpack('<Bdd', state)
                if tag == 4 then d2 = deadline else x2_1 = nil end
              end
          else
            others = others .. struct.pack('<I4I6Bc0', field, deadline, #state, state)
            if deadline > latest then latest = deadline end
          end
        end
      end
    end
  end
  local s1, r1
  do
    local key = KEYS[k + 1]
    local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
    local s, moved = nil, false
    -- Its slots were unpacked with its entry.
    local a, b = x1_1, x1_2
    if a then
      s = { a, b }
      -- A last refill beyond a fill time ahead: the clock stepped back; move it to now.
      if b - now > fillMs then s[2] = now; moved = true end
    else
      s = { capacity, now }
    end
    s1, r1 = s, moved
  end
  local s2, r2
  do
    local key = KEYS[k + 1]
    local limit, windowMs, calendar = 1000, 86400000, 0
    local s, moved = nil, false
    -- Its slots were unpacked with its entry.
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
    local a, b = x2_1, x2_2
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
    s2, r2 = s, moved
  end
  local denied = false
  local c1 = ARGV[base + 1]
  if c1 == '1' then c1 = 1 else c1 = tonumber(c1) end
  local a1, m1, e1, t1
  local o1, p1, q1 = s1[1], s1[2], s1[3]
    do
      local key, s, cost, commit = KEYS[k + 1], s1, c1, true
      local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
      local allowed, remaining, reset, retry
      do
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
      end
      a1, m1, e1, t1 = allowed, remaining, reset, retry
    end
  if a1 == 0 then denied = true end
  local c2 = ARGV[base + 2]
  if c2 == '1' then c2 = 1 else c2 = tonumber(c2) end
  local a2, m2, e2, t2
  local o2, p2, q2 = s2[1], s2[2], s2[3]
    do
      local key, s, cost, commit = KEYS[k + 1], s2, c2, true
      local limit, windowMs, calendar = 1000, 86400000, 0
      local allowed, remaining, reset, retry
      do
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
      end
      a2, m2, e2, t2 = allowed, remaining, reset, retry
    end
  if a2 == 0 then denied = true end
  if denied then
    if a1 == 1 then
      s1[1], s1[2], s1[3] = o1, p1, q1
    do
      local key, s, cost, commit = KEYS[k + 1], s1, 0, false
      local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
      local allowed, remaining, reset, retry
      do
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
      end
      a1, m1, e1, t1 = allowed, remaining, reset, retry
    end
    end
    if r1 and c1 ~= 0 then
      local key, s = KEYS[k + 1], s1
      local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
      local fresh
    do
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)
    end
    dirty = true
    if fresh <= now then
      x1_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x1_1, x1_2, d1 = s[1], s[2], deadline
    end
    end
    if a2 == 1 then
      s2[1], s2[2], s2[3] = o2, p2, q2
    do
      local key, s, cost, commit = KEYS[k + 1], s2, 0, false
      local limit, windowMs, calendar = 1000, 86400000, 0
      local allowed, remaining, reset, retry
      do
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
      end
      a2, m2, e2, t2 = allowed, remaining, reset, retry
    end
    end
    if r2 and c2 ~= 0 then
      local key, s = KEYS[k + 1], s2
      local limit, windowMs, calendar = 1000, 86400000, 0
      local fresh
    do
    if calendar == 0 then fresh = s[1] + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      fresh = (s[1] < windowMs and windowMs or (s[1] < b2 and b2 or (s[1] == b2 and b3 or s[1] + 2 * (b3 - b2))))
    end
    end
    dirty = true
    if fresh <= now then
      x2_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x2_1, x2_2, d2 = s[1], s[2], deadline
    end
    end
  else
    if a1 == 1 and c1 ~= 0 then
      local key, s = KEYS[k + 1], s1
      local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
      local fresh
    do
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)
    end
    dirty = true
    if fresh <= now then
      x1_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x1_1, x1_2, d1 = s[1], s[2], deadline
    end
    else
    if r1 and c1 ~= 0 then
      local key, s = KEYS[k + 1], s1
      local unitsPerMs, unitsPerToken, capacity = 1, 100, 2000
local fillMs, fullMs, split = 2000, 4000, false
      local fresh
    do
    fresh = s[2] - floorDiv(s[1] - capacity, unitsPerMs)
    end
    dirty = true
    if fresh <= now then
      x1_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x1_1, x1_2, d1 = s[1], s[2], deadline
    end
    end
    end
    if a2 == 1 and c2 ~= 0 then
      local key, s = KEYS[k + 1], s2
      local limit, windowMs, calendar = 1000, 86400000, 0
      local fresh
    do
    if calendar == 0 then fresh = s[1] + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      fresh = (s[1] < windowMs and windowMs or (s[1] < b2 and b2 or (s[1] == b2 and b3 or s[1] + 2 * (b3 - b2))))
    end
    end
    dirty = true
    if fresh <= now then
      x2_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x2_1, x2_2, d2 = s[1], s[2], deadline
    end
    else
    if r2 and c2 ~= 0 then
      local key, s = KEYS[k + 1], s2
      local limit, windowMs, calendar = 1000, 86400000, 0
      local fresh
    do
    if calendar == 0 then fresh = s[1] + windowMs
    else
      local first = floorDiv(calendar, 33554432)
      local b2 = windowMs + first * 1000
      local b3 = b2 + (calendar - first * 33554432) * 1000
      fresh = (s[1] < windowMs and windowMs or (s[1] < b2 and b2 or (s[1] == b2 and b3 or s[1] + 2 * (b3 - b2))))
    end
    end
    dirty = true
    if fresh <= now then
      x2_1 = nil
    else
      local deadline = fresh + 0
      if deadline > 281474976710655 then deadline = 281474976710655 end
      x2_1, x2_2, d2 = s[1], s[2], deadline
    end
    end
    end
  end
  if dirty then
    local out
    if others == '' and x1_1 and x2_1 then
      out = struct.pack('<I4I6BBddI4I6BBdd', 4266708676, d1, 17, 1, x1_1, x1_2, 2680620807, d2, 17, 4, x2_1, x2_2)
      latest = d1
      if d2 > latest then latest = d2 end
    else
      out = others
      if x1_1 then
        out = out .. struct.pack('<I4I6BBdd', 4266708676, d1, 17, 1, x1_1, x1_2)
        if d1 > latest then latest = d1 end
      end
      if x2_1 then
        out = out .. struct.pack('<I4I6BBdd', 2680620807, d2, 17, 4, x2_1, x2_2)
        if d2 > latest then latest = d2 end
      end
    end
    if latest == 0 then
      redis.call('DEL', KEYS[k + 1])
    else
      redis.call('SET', KEYS[k + 1], out, 'PXAT', format('%d', latest))
    end
  end

  if a1 == 1 then
    reply[w + 1], reply[w + 2] = m1, e1
    w = w + 2
  else
    reply[w + 1], reply[w + 2], reply[w + 3] = -1 - m1, e1, t1
    w = w + 3
  end
  if a2 == 1 then
    reply[w + 1], reply[w + 2] = m2, e2
    w = w + 2
  else
    reply[w + 1], reply[w + 2], reply[w + 3] = -1 - m2, e2, t2
    w = w + 3
  end
end
return reply
