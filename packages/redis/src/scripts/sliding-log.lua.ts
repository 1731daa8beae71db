import type { LuaAlgorithm } from './lua-algorithm.js'

/**
 * Sliding log (packages/core/src/algorithms/sliding-log.ts). The core keeps a ring of `limit`
 * timestamps; here the log is a Redis list, oldest first, one entry per admitted unit (Redis
 * packs small lists of integers into one listpack). A decision reads only what it needs: the
 * length and the newest entry (read once per request, kept in s = { length, newest } and
 * updated by the request's own writes), a search for the first live entry (galloping from the head, where
 * the expired ones are) and the entry that blocks a denied request, so a call costs a few list
 * reads, O(log n) at worst, not O(limit). Commits trim the expired head and append.
 * p1 = limit, p2 = windowMs.
 */
export const slidingLogLua: LuaAlgorithm = {
  name: 'sliding_log',
  kind: 'window',
  code: 5,
  load: `
    local size = redis.pcall('LLEN', key)
    -- Another algorithm's state under this key (a rule that changed algorithm) reads as empty.
    if type(size) ~= 'number' then
      redis.call('DEL', key)
      size = 0
    end
    local newest = 0
    if size > 0 then newest = tonumber(redis.call('LINDEX', key, -1)) end
    s = { size, newest }`,
  decide: `
    local size, newest = s[1], s[2]
    local at = max(now, newest)
    -- Entries are in time order: count the leading ones that have aged out. A request usually
    -- finds none or one, so read the first two in one go, then gallop (entries 3, 7, 15, …)
    -- and search the last step in halves: one read in the usual case, O(log n) at worst.
    local cutoff = at - p2
    local lo, probe = 0, 1
    if size > 0 then
      local head = redis.call('LRANGE', key, 0, 1)
      if tonumber(head[1]) <= cutoff then
        lo, probe = 1, 2
        if head[2] and tonumber(head[2]) <= cutoff then lo, probe = 2, 4 end
      end
    end
    while probe > 2 and probe <= size and tonumber(redis.call('LINDEX', key, probe - 1)) <= cutoff do
      lo = probe
      probe = probe * 2
    end
    local hi = min(probe - 1, size)
    while lo < hi do
      local mid = floorDiv(lo + hi, 2)
      if tonumber(redis.call('LINDEX', key, mid)) <= cutoff then lo = mid + 1 else hi = mid end
    end
    local live = size - lo
    if live + cost > p1 then
      local blocking = tonumber(redis.call('LINDEX', key, size + cost - p1 - 1))
      allowed, remaining, reset, retry = 0, p1 - live, newest + p2 - now, blocking + p2 - now
    else
      if commit then
        if lo > 0 then redis.call('LTRIM', key, lo, -1) end
        local left = cost
        while left > 0 do
          local batch = min(left, 100)
          local args = {}
          for i = 1, batch do args[i] = at end
          redis.call('RPUSH', key, unpack(args))
          left = left - batch
        end
        s[1] = size - lo + cost
        if cost > 0 then s[2] = at elseif s[1] == 0 then s[2] = 0 end
      end
      local newestAfter = 0
      if cost > 0 then newestAfter = at elseif live > 0 then newestAfter = newest end
      reset = newestAfter + p2 - now
      if live + cost == 0 then reset = 0 end
      allowed, remaining, retry = 1, p1 - live - cost, 0
    end`,
  refund: `
    if chargedAt > now - p2 and cost > 0 then
      local removed = redis.call('LREM', key, cost, chargedAt)
      if removed > 0 then
        s[1] = s[1] - removed
        local last = redis.call('LINDEX', key, -1)
        if last then s[2] = tonumber(last) else s[2] = 0 end
      end
    end`,
  freshAt: `
    if s[1] == 0 then fresh = 0 else fresh = s[2] + p2 end`,
  format: `nil`,
}
