import type { LuaAlgorithm } from './lua-algorithm.js'

/** Arguments per ZADD or ZREM call at most (Lua's `unpack` has a stack limit). */
const BATCH = 100

/** The member of unit `j` of lease `lease` of process `owner`: `owner:lease:j`. */
const member = (j: string) => `format('%d:%d:%d', owner, lease, ${j})`

/** Calls `command` on the key with the arguments `unit` sets for each unit, in batches; counts the reply. */
const perUnit = (command: string, unit: (j: string) => string) => `
      local done, count = 0, 0
      while done < cost do
        local batch, args = min(cost - done, ${BATCH}), {}
        for j = 1, batch do ${unit('done + j')} end
        count = count + redis.call(${command}, key, unpack(args))
        done = done + batch
      end`

/**
 * Concurrency (packages/core/src/algorithms/concurrency.ts) with leases: the key holds a sorted
 * set whose members are the units in flight, each scored by the time its lease ends. A request
 * of cost c that is admitted adds c members (`owner:lease:1` … `owner:lease:c`, `owner` being
 * the store's random process id and `lease` its sequence number) scored now + leaseMs; its
 * release removes them (ZREM); the store that holds them renews their scores while the request
 * lasts (renew.lua.ts). A process that dies renews nothing: each load first removes the units
 * whose lease has ended, so its slots come back after the lease time.
 *
 * Why a member per unit and not one per lease with its cost: ZCARD is then the number held, in
 * O(1), and the sweep is one ZREMRANGEBYSCORE; a member per lease would need its costs summed
 * (or a second key kept in step). Costs above 1 are rare for a concurrency rule.
 *
 * s = { units held, units this load swept }. The sweep's count goes back in the reply (main.lua.ts):
 * the store tells it as expired leases, so that a lease nobody renews is counted by whoever removes it.
 * Parameters: limit, retryAfterMs, leaseMs, owner, lease (the last two
 * per request, so this algorithm is only run by the general scripts).
 */
export const concurrencyLua: LuaAlgorithm = {
  name: 'concurrency',
  kind: 'concurrency',
  parameters: ['limit', 'retryAfterMs', 'leaseMs', 'owner', 'lease'],
  code: 8,
  load: () => `
    -- Leases that have ended (a process that died holding them) free their slots; s[2] tells
    -- the caller how many units this load removed, so that each is counted once.
    local swept = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', format('%d', now))
    -- Another type (a rule that changed algorithm): no state.
    if type(swept) ~= 'number' then
      redis.call('DEL', key)
      swept = 0
    end
    s = { redis.call('ZCARD', key), swept }`,
  decide: `
    local held = s[1]
    if cost > 0 and held + cost > limit then
      allowed, remaining, reset, retry = 0, max(0, limit - held), retryAfterMs, retryAfterMs
    else
      if commit and cost > 0 then
        local ends = format('%d', now + leaseMs)${perUnit("'ZADD'", (j) => `args[2 * j - 1], args[2 * j] = ends, ${member(j)}`)}
        s[1] = held + cost
      end
      allowed, remaining, reset, retry = 1, max(0, limit - held - cost), 0, 0
    end`,
  refund: `
    if cost > 0 then${perUnit("'ZREM'", (j) => `args[j] = ${member(j)}`)}
      s[1] = s[1] - count
    end`,
  // Fresh once the last lease ends: the key then expires with it.
  freshAt: `
    fresh = 0
    if s[1] > 0 then
      local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
      if last[2] then fresh = tonumber(last[2]) end
    end`,
  // The set was written in place: only its expiry is left to set.
  format: 'false',
}
