import type { Clock } from '@tollgate/core'

/** The timer functions the client uses: `setTimeout` and `clearTimeout`, or a test's own. */
export type Timers = {
  readonly setTimeout: (callback: () => void, ms: number) => unknown
  readonly clearTimeout: (handle: unknown) => void
}

/** The runtime's timers, looked up when called, so fake timers installed later apply. */
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/** setTimeout's delay is a signed 32-bit number of ms: a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

type Entry = { readonly at: number; readonly seq: number; readonly run: () => void }

/**
 * Everything that waits (queued acquisitions, retries, learned waits) is an entry here, and one
 * timer is armed for the earliest of them: no timer per waiting call.
 */
export type Scheduler = {
  /** The clock's time in whole ms. */
  readonly now: () => number
  /** Runs `run` at `time` (ms on the clock) or soon after; returns a cancel function. */
  readonly at: (time: number, run: () => void) => () => void
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  readonly sleep: (ms: number, signal?: AbortSignal | undefined) => Promise<void>
}

export type SchedulerOptions = {
  /** @default systemClock of @tollgate/core (Date.now) */
  readonly clock?: Clock | undefined
  /** @default the runtime's setTimeout and clearTimeout */
  readonly timers?: Timers | undefined
}

export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const clock = options.clock ?? { now: () => Date.now() }
  const timers = options.timers ?? systemTimers
  // Sorted by time, then by order of arrival: equal times run first come, first served.
  const entries: Entry[] = []
  let seq = 0
  let armed: { at: number; handle: unknown } | undefined

  const now = () => Math.max(0, Math.floor(clock.now()))

  function arm(): void {
    const first = entries[0]
    if (armed !== undefined && first !== undefined && armed.at === first.at) return
    if (armed !== undefined) timers.clearTimeout(armed.handle)
    armed = undefined
    if (first === undefined) return
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, first.at - now()))
    armed = { at: first.at, handle: timers.setTimeout(fire, delay) }
  }

  function fire(): void {
    armed = undefined
    const time = now()
    const due: Entry[] = []
    while (entries.length > 0 && entries[0]!.at <= time) due.push(entries.shift()!)
    for (const entry of due) entry.run()
    arm() // also re-arms a timer that fired early, or one capped at MAX_TIMER_MS
  }

  function at(time: number, run: () => void): () => void {
    const entry: Entry = { at: time, seq: seq++, run }
    let index = entries.length
    while (index > 0 && entries[index - 1]!.at > time) index--
    entries.splice(index, 0, entry)
    arm()
    return () => {
      const position = entries.indexOf(entry)
      if (position < 0) return
      entries.splice(position, 1)
      arm()
    }
  }

  function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const onAbort = () => {
        cancel()
        reject(signal!.reason)
      }
      const cancel = at(now() + Math.max(0, ms), () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      })
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  return { now, at, sleep }
}
