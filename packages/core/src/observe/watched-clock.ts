import type { Clock } from '../clock.js'
import type { Emit } from './fan-out.js'

/** @default 1000: NTP steps rather than slews an offset above 128 ms; a second is a clear step. */
export const DEFAULT_CLOCK_STEP_FORWARD_MS = 1000

/**
 * `clock`, telling `emit` each time it steps: back, when it reads earlier than before (in whole
 * ms); forward, when it ran ahead of the `monotonic` clock (the runtime's `performance.now`) by
 * at least `forwardMs` since the two were last compared. Idle time moves both alike, so it is
 * never taken for a step. The monotonic clock is read only when the clock has moved `forwardMs`
 * or more since the last comparison (no step that large can hide in less), and after a step back.
 */
export function watchedClock(
  clock: Clock,
  emit: Emit,
  monotonic: () => number,
  forwardMs: number,
): Clock {
  let latest = Number.NEGATIVE_INFINITY
  // Where the clocks were last compared: the clock's reading and the monotonic one.
  let comparedAt = Number.NaN
  let comparedMonotonic = 0
  const compare = (now: number) => {
    const elapsed = monotonic()
    if (!Number.isNaN(comparedAt)) {
      const ahead = now - comparedAt - (elapsed - comparedMonotonic)
      if (ahead >= forwardMs)
        emit({ type: 'clock.step', direction: 'forward', ms: Math.round(ahead) })
    }
    comparedAt = now
    comparedMonotonic = elapsed
  }
  return {
    now() {
      const value = clock.now()
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
        const now = Math.floor(value)
        if (now < latest) {
          emit({ type: 'clock.step', direction: 'backward', ms: latest - now })
          comparedAt = Number.NaN
          compare(now)
        } else if (!(now - comparedAt < forwardMs)) {
          compare(now)
        }
        latest = now
      }
      return value
    },
  }
}
