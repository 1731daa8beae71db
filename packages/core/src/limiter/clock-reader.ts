import { MAX_TIME_MS } from '../algorithms/integer.js'
import type { Clock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import { messageOf, type Reporter } from './report.js'

/** Reads the limiter's clock, as whole ms, and notices when it steps back or fails. */
type ClockReader = {
  /** The time in whole ms (a fraction floored), or the error of a clock that failed. */
  read(): number | RateLimitError
  /** The latest time read, or 0 before any: where a clock failure's verdict is placed. */
  readonly latest: number
  /** How many readings were earlier than the one before (a step back, such as an NTP fix). */
  readonly stepsBack: number
}

export function clockReader(clock: Clock, reporter: Reporter): ClockReader {
  let latest = 0
  let stepsBack = 0
  return {
    get latest() {
      return latest
    },
    get stepsBack() {
      return stepsBack
    },
    read() {
      let value: unknown
      try {
        value = clock.now()
      } catch (error) {
        return clockFailed(`clock.now() threw: ${messageOf(error)}`, error)
      }
      if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIME_MS)) {
        return clockFailed(
          `clock.now() returned ${typeof value === 'number' ? value : typeof value}, expected ms since the epoch between 0 and ${MAX_TIME_MS}`,
        )
      }
      const now = Math.floor(value)
      if (now < latest) {
        stepsBack++
        reporter.warnOnce(
          'WARN_CLOCK_STEPPED_BACK',
          'the clock stepped back; a key is held at its own time for up to its reset span and moved to the new time beyond that (limiter.clockStepsBack counts the steps)',
        )
      }
      latest = now
      return now
    },
  }
}

function clockFailed(message: string, cause?: unknown): RateLimitError {
  return new RateLimitError('ERR_RL_CLOCK_FAILED', message, { cause })
}
