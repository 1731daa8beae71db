import { serverNowLua } from './server-time.lua.js'
/**
 * The renewal script: moves the end of leases still held to now + the lease time, in one call
 * for every lease of a process (per slot on Redis Cluster). A lease that has already ended is
 * not brought back: its units may be another request's by now, and the limit holds. Its holder
 * is told: it ran out. Each ended unit is counted once, by whoever removes it: a unit whose end
 * has passed but which is still there (an end at or before now, as concurrency.lua.ts's sweep)
 * is removed here and counted in this reply; one already gone was swept (and counted) by a load,
 * or released, and is not counted again.
 *
 *   KEYS = one per lease
 *   ARGV = [now, or -1 for the server's TIME; expiry margin (ms); lease time (ms);
 *           then per lease: owner, lease number, cost]
 *
 * Replies, per lease, two counts: its units still held (fewer than its cost: it had ended), and
 * those of its units this call found ended and removed.
 */
export const renewLua = `-- tollgate: renew leases. KEYS: one per lease.
-- ARGV: now (-1: the server's TIME), expiry margin (ms), lease time (ms),
-- then per lease: owner, lease number, cost (see concurrency.lua.ts for the members).
local format, min = string.format, math.min
local now, absolute = tonumber(ARGV[1]), false
if now < 0 then
  ${serverNowLua('now')}
  absolute = true
end
local margin, ends = tonumber(ARGV[2]), tonumber(ARGV[3]) + now
local reply = {}
for i = 1, #KEYS do
  local key, base = KEYS[i], i * 3 + 1
  local owner, lease, cost = tonumber(ARGV[base]), tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  local held, ended, done = 0, 0, 0
  while done < cost do
    local batch, members, scored, gone = min(cost - done, 100), {}, {}, {}
    for j = 1, batch do members[j] = format('%d:%d:%d', owner, lease, done + j) end
    local scores = redis.pcall('ZMSCORE', key, unpack(members))
    if type(scores) == 'table' and not scores.err then
      local n = 0
      for j = 1, batch do
        local score = scores[j] and tonumber(scores[j])
        if score and score > now then
          n = n + 1
          scored[2 * n - 1], scored[2 * n] = format('%d', ends), members[j]
        elseif score then
          gone[#gone + 1] = members[j]
        end
      end
      held = held + n
      if #scored > 0 then redis.call('ZADD', key, 'XX', unpack(scored)) end
      if #gone > 0 then ended = ended + redis.call('ZREM', key, unpack(gone)) end
    end
    done = done + batch
  end
  if held > 0 then
    -- The key lasts as long as its last lease (another process's may end later).
    local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    if absolute then
      redis.call('PEXPIREAT', key, format('%d', last + margin))
    else
      redis.call('PEXPIRE', key, format('%d', last - now + margin))
    end
  end
  reply[2 * i - 1], reply[2 * i] = held, ended
end
return reply
`
