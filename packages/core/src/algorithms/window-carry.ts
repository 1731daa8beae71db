import { type CarryStrategy, carriedUse, type UseForm } from './carried-use.js'
import { PACKED_CAPACITY_LIMIT } from './packed-state.js'
import type { Algorithm, StateSlots } from './types.js'

/*
 * The amount used of a window rule, in requests: a fixed window's count while its window lasts,
 * a sliding window's estimate (rounded up). A carried amount is counted in the window of `now`.
 */

export const windowUse: UseForm = {
  full: (algorithm) => algorithm.limit,
  perUnit: () => 1,
  usedAt(algorithm, slots, offset, now) {
    if (algorithm.name === 'fixed_window') {
      // The stored window's count while it lasts (freshAt is its end).
      return now < algorithm.freshAt(slots, offset) ? slots[offset + 1]! : 0
    }
    // The estimate as a decision of cost 0 reports it: what is not left.
    const look = algorithm.decide(slots, offset, 0, now, false)
    return algorithm.limit - look.remaining
  },
  withUse(algorithm, used, now) {
    const state = new Array<number>(algorithm.stateSize).fill(0)
    algorithm.init(state, 0, now)
    if (algorithm.name === 'fixed_window') {
      // A count above the limit (`keep`'s debt) must still fit the 8-byte form's 21 bits.
      state[1] = algorithm.packed === undefined ? used : Math.min(used, PACKED_CAPACITY_LIMIT - 1)
    } else if (algorithm.params?.kind === 'window' && algorithm.params.buckets === undefined) {
      // The two counters (two sub-window counters take three numbers too).
      state[2] = used
    } else {
      // Sub-window counters: charged at `now`, up to the limit.
      algorithm.decide(state, 0, Math.min(used, algorithm.limit), now, true)
    }
    return state
  },
}

/** Numbers before a log's ring (sliding-log.ts). */
const HEADER = 3

/**
 * A sliding log into a sliding log: the live entries keep their times, so they age out when they
 * would have. `keep` and `additive` keep the newest of them up to the new limit (a log holds no
 * more); `proportional` keeps ceil(live × new limit / old limit) entries, the n-th taking the time
 * of the old entry at the same fraction of the log, so the log ages out as the old one would.
 */
export function carryLog(
  from: Algorithm,
  slots: StateSlots,
  offset: number,
  to: Algorithm,
  now: number,
  strategy: CarryStrategy,
): number[] | undefined {
  const windowMs = from.policy.windowMs
  const size = slots[offset + 1]!
  const room = Math.min(from.limit, slots[offset + 2]!)
  const times: number[] = []
  for (let n = 0; n < size; n++) {
    const time = slots[offset + HEADER + ((slots[offset]! + n) % room)]!
    if (time > now - windowMs) times.push(time)
  }
  const live = times.length
  const count = Math.min(
    to.limit,
    carriedUse(strategy, live, { full: from.limit, perUnit: 1 }, { full: to.limit, perUnit: 1 }),
  )
  if (count === 0) return undefined
  const kept =
    strategy === 'proportional'
      ? Array.from({ length: count }, (_, n) => times[Math.floor((n * live) / count)]!)
      : times.slice(live - count)
  const state = new Array<number>(HEADER + to.limit).fill(0)
  state[1] = count
  state[2] = to.limit
  for (let n = 0; n < count; n++) state[HEADER + n] = kept[n]!
  return state
}
