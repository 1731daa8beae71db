import { ceilDiv, floorDiv } from '../algorithms/integer.js'
import { TIME_HIGH, TIME_HIGH_MASK, TWO_POW_32 } from '../algorithms/packed-state.js'
import { costTooHigh } from '../algorithms/params.js'
import type { Algorithm, AlgorithmParams, PackedState } from '../algorithms/types.js'

/*
 * The 8-byte forms of the token bucket, the leaky bucket and the fixed window (packed-state.ts),
 * kept by the memory store rather than by the algorithms: an app on another store holds none of
 * them. An algorithm says it has one (`packed: true`, set by its factory when its capacity or
 * limit fits); the form is built from its name and scaled parameters (`params`), as the Redis
 * store picks its scripts, once per table. Each method is the algorithm's unpacked namesake with
 * the reads and writes of the words written out.
 */

type RateParams = Extract<AlgorithmParams, { kind: 'rate' }>
type WindowParams = Extract<AlgorithmParams, { kind: 'window' }>

/** The 8-byte form of `algorithm`'s states, or undefined when it has none. */
export function packedForm(algorithm: Algorithm): PackedState | undefined {
  const params = algorithm.params
  if (algorithm.packed !== true || algorithm.entries !== undefined || params === undefined) {
    return undefined
  }
  if (params.kind === 'rate') {
    const water = algorithm.name === 'leaky_bucket'
    if (water || algorithm.name === 'token_bucket') return packedBucket(params, water)
  } else if (params.kind === 'window' && algorithm.name === 'fixed_window') {
    return packedFixedWindow(params)
  }
  return undefined
}

/**
 * A bucket's state: the token bucket's level where packed-state.ts keeps its count, or the
 * leaky bucket's as the same level (`water`: its water is what the level lacks of full, and
 * the two make the same decisions), so one form serves both; only their unpacked states differ.
 */
function packedBucket(
  { burst, unitsPerMs, unitsPerToken, capacity }: RateParams,
  water: boolean,
): PackedState {
  const fillMs = ceilDiv(capacity, unitsPerMs)
  const stored = (level: number) => (water ? capacity - level : level)
  return {
    init(words, at, now) {
      words[at] = now >>> 0
      words[at + 1] = capacity * TIME_HIGH + Math.floor(now / TWO_POW_32)
    },
    decide(words, at, cost, now, commit) {
      if (cost > burst) throw costTooHigh(cost, burst)
      const high = words[at + 1]!
      const held = high >>> 11
      let last = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]!
      if (last - now > fillMs) {
        last = now
        // An inspection (cost 0) writes nothing, not even this move (inspection.ts).
        if (cost > 0) {
          words[at] = now >>> 0
          words[at + 1] = held * TIME_HIGH + Math.floor(now / TWO_POW_32)
        }
      }
      const at2 = Math.max(now, last)
      const skew = at2 - now
      const elapsed = at2 - last
      const level = elapsed >= fillMs ? capacity : Math.min(capacity, held + elapsed * unitsPerMs)
      const need = cost * unitsPerToken
      if (level < need) {
        return {
          allowed: false,
          remaining: floorDiv(level, unitsPerToken),
          limit: burst,
          resetAfterMs: skew + ceilDiv(capacity - level, unitsPerMs),
          retryAfterMs: skew + ceilDiv(need - level, unitsPerMs),
        }
      }
      const left = level - need
      if (commit && cost > 0) {
        words[at] = at2 >>> 0
        words[at + 1] = left * TIME_HIGH + Math.floor(at2 / TWO_POW_32)
      }
      return {
        allowed: true,
        remaining: floorDiv(left, unitsPerToken),
        limit: burst,
        resetAfterMs: left === capacity ? 0 : skew + ceilDiv(capacity - left, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund(words, at, cost, _chargedAt, now) {
      const high = words[at + 1]!
      const held = high >>> 11
      let last = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]!
      if (last - now > fillMs) last = now
      const at2 = Math.max(now, last)
      const elapsed = at2 - last
      const level = elapsed >= fillMs ? capacity : Math.min(capacity, held + elapsed * unitsPerMs)
      const refilled = Math.min(capacity, level + cost * unitsPerToken)
      words[at] = at2 >>> 0
      words[at + 1] = refilled * TIME_HIGH + Math.floor(at2 / TWO_POW_32)
    },
    freshAt(words, at) {
      const high = words[at + 1]!
      const last = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]!
      return last + ceilDiv(capacity - (high >>> 11), unitsPerMs)
    },
    unpack(words, at, to, offset) {
      const high = words[at + 1]!
      to[offset] = stored(high >>> 11)
      to[offset + 1] = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]!
    },
    pack(from, offset, words, at) {
      const last = from[offset + 1]!
      words[at] = last >>> 0
      words[at + 1] = stored(from[offset]!) * TIME_HIGH + Math.floor(last / TWO_POW_32)
    },
  }
}

/**
 * Added to a window's start in the 8-byte form: a calendar window may start before the epoch (a
 * local day, week, month or year that holds time 0 east of UTC) and end after MAX_TIME_MS, up
 * to a year either side; biased, every start lies in 0 … 2^43.
 */
const START_BIAS = 2 ** 40

/**
 * The fixed window's state: its start (biased, below 2^43 ms even for a calendar window moved
 * past MAX_TIME_MS) where a bucket keeps its time, and the count where it keeps its level. Its
 * windows lie as the algorithm's own (fixed-window.ts): on the calendar, from each key's first
 * charge, or on the multiples of the window since the epoch.
 */
function packedFixedWindow({ limit, windowMs, calendar, anchor }: WindowParams): PackedState {
  const startOf =
    calendar === undefined
      ? anchor === 'first-charge'
        ? (t: number) => t
        : (t: number) => t - (t % windowMs)
      : (t: number) => calendar.windowAt(t)[0]
  const endOf =
    calendar === undefined
      ? (start: number) => start + windowMs
      : (start: number) => calendar.windowAt(start)[1]
  return {
    init(words, at, now) {
      const start = startOf(now)
      words[at] = (start + START_BIAS) >>> 0
      words[at + 1] = Math.floor((start + START_BIAS) / TWO_POW_32)
    },
    decide(words, at, cost, now, commit) {
      if (cost > limit) throw costTooHigh(cost, limit)
      const high = words[at + 1]!
      let stored = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]! - START_BIAS
      const storedCount = high >>> 11
      const nowStart = startOf(now)
      const nowEnd = endOf(nowStart)
      // As the algorithm's `rebase`; an inspection (cost 0) writes nothing, not even this move.
      const moved =
        calendar !== undefined ? Math.min(stored, nowEnd) : stored - now > windowMs ? now : stored
      if (moved !== stored) {
        stored = moved
        if (cost > 0) {
          words[at] = (stored + START_BIAS) >>> 0
          words[at + 1] = storedCount * TIME_HIGH + Math.floor((stored + START_BIAS) / TWO_POW_32)
        }
      }
      const storedEnd = endOf(stored)
      const start = now < storedEnd ? stored : Math.max(nowStart, storedEnd)
      const count = start === stored ? storedCount : 0
      const end = start === stored ? storedEnd : start === nowStart ? nowEnd : endOf(start)
      const untilEnd = end - now
      if (cost > 0 && count + cost > limit) {
        return {
          allowed: false,
          remaining: Math.max(0, limit - count),
          limit,
          resetAfterMs: untilEnd,
          retryAfterMs: untilEnd,
        }
      }
      const charged = count + cost
      if (commit && cost > 0) {
        words[at] = (start + START_BIAS) >>> 0
        words[at + 1] = charged * TIME_HIGH + Math.floor((start + START_BIAS) / TWO_POW_32)
      }
      return {
        allowed: true,
        remaining: Math.max(0, limit - charged),
        limit,
        resetAfterMs: charged === 0 ? 0 : untilEnd,
        retryAfterMs: undefined,
      }
    },
    refund(words, at, cost, chargedAt, now) {
      const high = words[at + 1]!
      let stored = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]! - START_BIAS
      let count = high >>> 11
      if (calendar !== undefined) {
        const nowEnd = endOf(startOf(now))
        if (stored > nowEnd) stored = nowEnd
      } else if (stored - now > windowMs) stored = now
      if (chargedAt >= stored && chargedAt < endOf(stored)) count = Math.max(0, count - cost)
      words[at] = (stored + START_BIAS) >>> 0
      words[at + 1] = count * TIME_HIGH + Math.floor((stored + START_BIAS) / TWO_POW_32)
    },
    freshAt(words, at) {
      return endOf((words[at + 1]! & TIME_HIGH_MASK) * TWO_POW_32 + words[at]! - START_BIAS)
    },
    unpack(words, at, to, offset) {
      const high = words[at + 1]!
      to[offset] = (high & TIME_HIGH_MASK) * TWO_POW_32 + words[at]! - START_BIAS
      to[offset + 1] = high >>> 11
    },
    pack(from, offset, words, at) {
      const start = from[offset]!
      words[at] = (start + START_BIAS) >>> 0
      words[at + 1] = from[offset + 1]! * TIME_HIGH + Math.floor((start + START_BIAS) / TWO_POW_32)
    },
  }
}
