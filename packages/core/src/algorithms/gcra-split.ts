import type { Decision } from '../decision.js'
import { inspectionCopy } from './inspection.js'
import { ceilDiv, floorDiv } from './integer.js'
import { costTooHigh, type ScaledRate } from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/**
 * GCRA for rates too fine for ticks since the epoch (see gcra.ts): the TAT as two numbers, whole
 * ms and the ticks beyond them (0 ≤ ticks < unitsPerMs). The arithmetic works on how far the
 * TAT lies ahead of now, split the same way, and forms a count of ticks only below a fill time
 * ahead (then under capacity + 2 × unitsPerMs), so no intermediate reaches 2^53 for any rate the
 * token bucket takes. Decisions are those of the one-number form, and of the token bucket.
 */
export function splitGcra(scaled: ScaledRate): Algorithm {
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaled
  const fillMs = ceilDiv(capacity, unitsPerMs)
  // The TAT ahead of now, read by readAhead.
  let aheadMs = 0
  let aheadTicks = 0

  /** Reads how far the TAT lies ahead of `now` (none when it has passed: a full bucket). */
  function readAhead(slots: StateSlots, offset: number, now: number): void {
    aheadMs = slots[offset]! - now
    aheadTicks = slots[offset + 1]!
    if (aheadMs < 0) aheadMs = aheadTicks = 0
    // Held for up to two fill times, as in gcra.ts; further ahead, the clock stepped back more:
    // moved to a drained bucket at `now`, kept even on a denial.
    if (aheadMs > 2 * fillMs) {
      aheadMs = floorDiv(capacity, unitsPerMs)
      aheadTicks = capacity - aheadMs * unitsPerMs
      write(slots, offset, now)
    }
  }

  /** Sets the TAT `ticks` ahead of `now` (0 ≤ ticks, a safe integer). */
  function setAhead(ticks: number): void {
    aheadMs = floorDiv(ticks, unitsPerMs)
    aheadTicks = ticks - aheadMs * unitsPerMs
  }

  function write(slots: StateSlots, offset: number, now: number): void {
    slots[offset] = now + aheadMs
    slots[offset + 1] = aheadTicks
  }

  function refund(
    slots: StateSlots,
    offset: number,
    cost: number,
    _chargedAt: number,
    now: number,
  ): void {
    readAhead(slots, offset, now)
    // Moves the TAT back by the cost, never before `now`, in ms and ticks.
    const units = -cost * unitsPerToken
    const ms = floorDiv(units, unitsPerMs)
    aheadMs += ms
    aheadTicks += units - ms * unitsPerMs
    if (aheadTicks >= unitsPerMs) {
      aheadMs += 1
      aheadTicks -= unitsPerMs
    }
    if (aheadMs < 0) aheadMs = aheadTicks = 0
    write(slots, offset, now)
  }

  return {
    name: 'gcra',
    limit: burst,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst },
    stateSize: 2,
    init(slots, offset, now) {
      slots[offset] = now
      slots[offset + 1] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > burst) throw costTooHigh(cost, burst)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 2)
        offset = 0
      }
      readAhead(slots, offset, now)
      const need = cost * unitsPerToken
      const resetAfterMs = aheadMs + (aheadTicks > 0 ? 1 : 0)
      // Beyond a fill time ahead the bucket is below empty: nothing remains.
      const ticks = aheadMs > fillMs ? undefined : aheadMs * unitsPerMs + aheadTicks
      const fits = ticks !== undefined && ticks <= capacity - need
      // Cost 0 only inspects: it passes even when the TAT looks more than a bucket ahead.
      if (cost > 0 && !fits) {
        return {
          allowed: false,
          remaining:
            ticks === undefined || ticks > capacity ? 0 : floorDiv(capacity - ticks, unitsPerToken),
          limit: burst,
          resetAfterMs,
          // ceil((TAT ahead + need − capacity) / unitsPerMs), without forming the sum
          retryAfterMs: aheadMs + ceilDiv(aheadTicks + need - capacity, unitsPerMs),
        }
      }
      if (!fits) {
        return { allowed: true, remaining: 0, limit: burst, resetAfterMs, retryAfterMs: undefined }
      }
      const after = ticks + need
      if (commit) {
        setAhead(after)
        write(slots, offset, now)
      }
      return {
        allowed: true,
        remaining: floorDiv(capacity - after, unitsPerToken),
        limit: burst,
        resetAfterMs: ceilDiv(after, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund,
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual < charged) return refund(slots, offset, charged - actual, chargedAt, now)
      if (actual === charged) return
      // As gcra.ts settles, on the TAT split in ms and ticks: how far it lies ahead of the base
      // (the reservation, or `now` if earlier), at least 0 and at most two buckets.
      readAhead(slots, offset, now)
      const base = Math.min(chargedAt, now)
      let ms = slots[offset]! - base
      let ticks = slots[offset + 1]!
      if (ms < 0) ms = ticks = 0
      const boundMs = floorDiv(2 * capacity, unitsPerMs)
      if (ms > boundMs + 1) return
      // Below 2 × capacity + 2 × unitsPerMs: a safe integer.
      const room = (boundMs - ms) * unitsPerMs + (2 * capacity - boundMs * unitsPerMs) - ticks
      if (room <= 0) return
      const extra = Math.min(actual - charged, ceilDiv(room, unitsPerToken)) * unitsPerToken
      const total = ticks + Math.min(room, extra)
      const carried = floorDiv(total, unitsPerMs)
      slots[offset] = base + ms + carried
      slots[offset + 1] = total - carried * unitsPerMs
    },
    freshAt(slots, offset) {
      return slots[offset]! + (slots[offset + 1]! > 0 ? 1 : 0)
    },
  }
}
