import type { LuaAlgorithm } from './lua-algorithm.js'
import { packState, unpackState } from './packed-state.js'

/**
 * Sliding window counter (packages/core/src/algorithms/sliding-window.ts), line for line, and with
 * `buckets` > 0 its sub-window counters (s = { newest sub-window start, one count per sub-window }).
 * s = { current window start in ms, previous count, current count }, packed (packed-state.ts).
 * `resetAt` and `retryAt` are the core's helpers of the same names, inlined.
 */
const resetAt = (current: string) =>
  `if ${current} > 0 then reset = start + 2 * windowMs elseif previous > 0 then reset = start + windowMs else reset = 0 end`

const CODE = 6

/**
 * A state of sub-window counters is tagged apart from the two counters' (two buckets pack as
 * many numbers), so that a rule switching between the forms never reads the other's state.
 */
const BUCKETS_TAG = 70

/** s's index of the counter of sub-window `n`: the core's ring slot 1 + (n mod buckets). */
const slot = (n: string) => `2 + (${n}) - floorDiv(${n}, buckets) * buckets`

/** Sets `fresh`: when the newest non-empty sub-window from `newest` down to `oldest` ages out. */
const lastExpiry = (oldest: string, newest: string) => `
      fresh = 0
      for m = ${newest}, ${oldest}, -1 do
        if s[${slot('m')}] > 0 then fresh = (m + buckets) * width; break end
      end`

const packedBuckets = `'<B' .. string.rep('d', buckets + 1)`

/** Sub-window counters (packages/core/src/algorithms/sub-window-counters.ts), line for line. */
const bucketsLoad = `
      local width = windowMs / buckets
      if v and #v == 9 + 8 * buckets then
        local t = { struct.unpack(${packedBuckets}, v) }
        if t[1] == ${BUCKETS_TAG} then
          s = {}
          for j = 1, buckets + 1 do s[j] = t[j + 1] end
        end
      end
      if s then
        local newest, nowIndex = s[1] / width, floorDiv(now, width)
        if (newest - nowIndex) * width > windowMs then
          local counts = {}
          for j = 0, buckets - 1 do counts[j] = s[${slot('newest - j')}] end
          for j = 0, buckets - 1 do s[${slot('nowIndex - j')}] = counts[j] end
          s[1] = nowIndex * width
          moved = true
        end
      else
        s = { floorDiv(now, width) * width }
        for j = 2, buckets + 1 do s[j] = 0 end
      end`

const bucketsDecide = `
      local width = windowMs / buckets
      local newest = s[1] / width
      local at = max(floorDiv(now, width), newest)
      local oldest = max(at - buckets + 1, newest - buckets + 1)
      local sum = 0
      for m = oldest, newest do sum = sum + s[${slot('m')}] end
      local fresh
      if cost > 0 and sum + cost > limit then
        local m = oldest
        local expiring = sum + cost - limit - s[${slot('m')}]
        while expiring > 0 do
          m = m + 1
          expiring = expiring - s[${slot('m')}]
        end
        ${lastExpiry('oldest', 'newest')}
        allowed, remaining, reset, retry = 0, max(0, limit - sum), fresh - now, (m + buckets) * width - now
      else
        if commit and cost > 0 then
          for m = max(newest + 1, at - buckets + 1), at do s[${slot('m')}] = 0 end
          s[1] = at * width
          s[${slot('at')}] = s[${slot('at')}] + cost
        end
        if cost > 0 then fresh = (at + buckets) * width else ${lastExpiry('oldest', 'newest')}
        end
        reset = 0
        if fresh > 0 then reset = fresh - now end
        allowed, remaining, retry = 1, max(0, limit - sum - cost), 0
      end`

const bucketsRefund = `
      local width = windowMs / buckets
      local charged, newest = floorDiv(chargedAt, width), s[1] / width
      if charged <= newest and charged > newest - buckets then
        local i = ${slot('charged')}
        s[i] = max(0, s[i] - cost)
      end`

// A state last written before the charge's sub-window is first moved on to it, as a charge then
// would have moved it; the charge's sub-window, while still counted, takes the difference, and
// after it has aged out an extra goes to now's sub-window.
const bucketsSettle = `
      local width = windowMs / buckets
      local index = floorDiv(chargedAt, width)
      local from = s[1] / width
      local at = max(floorDiv(now, width), from)
      if index > from and index <= at then
        for m = max(from + 1, index - buckets + 1), index do s[${slot('m')}] = 0 end
        s[1] = index * width
      end
      local newest = s[1] / width
      if index <= newest and index > at - buckets then
        local i = ${slot('index')}
        s[i] = max(0, s[i] + actual - charged)
      elseif actual > charged then
        for m = max(newest + 1, at - buckets + 1), at do s[${slot('m')}] = 0 end
        s[1] = at * width
        s[${slot('at')}] = s[${slot('at')}] + actual - charged
      end`

const bucketsFreshAt = `
      local width = windowMs / buckets
      local newest = s[1] / width
      ${lastExpiry('newest - buckets + 1', 'newest')}`

export const slidingWindowLua: LuaAlgorithm = {
  name: 'sliding_window',
  kind: 'window',
  code: CODE,
  parameters: ['limit', 'windowMs', 'buckets'],
  load: (read) => `
    if buckets > 0 then${bucketsLoad}
    else
    ${unpackState(CODE, ['a', 'b', 'c'], read)}
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
    end`,
  decide: `
    if buckets > 0 then${bucketsDecide}
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
      ${resetAt('current')}
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
      ${resetAt('charged')}
      allowed, remaining, reset, retry = 1, max(0, floorDiv(budget - used - cost * windowMs, windowMs)), max(0, reset - now), 0
    end
    end`,
  refund: `
    if buckets > 0 then${bucketsRefund}
    else
    local chargedStart = floorDiv(chargedAt, windowMs) * windowMs
    if chargedStart == s[1] then
      s[3] = max(0, s[3] - cost)
    elseif chargedStart == s[1] - windowMs then
      s[2] = max(0, s[2] - cost)
    end
    end`,
  // The charge weighs while its window is now's or the one before (in the current count, or in
  // the previous count while the stored window is now's); after that nothing comes back and an
  // extra is charged to now's window. A state last written before the charge's window is first
  // moved on to it.
  settle: `
    if buckets > 0 then${bucketsSettle}
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
    end`,
  freshAt: `
    if buckets > 0 then${bucketsFreshAt}
    else
    if s[3] > 0 then fresh = s[1] + 2 * windowMs elseif s[2] > 0 then fresh = s[1] + windowMs else fresh = 0 end
    end`,
  format: `(buckets > 0 and struct.pack(${packedBuckets}, ${BUCKETS_TAG}, unpack(s, 1, buckets + 1)) or ${packState(CODE, 3)})`,
}
