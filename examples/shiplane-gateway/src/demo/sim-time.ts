import type { Clock, Timers } from '@tollgate/express'

/**
 * A clock and timers the demo moves itself: `advanceTo(t)` runs the timers due by `t`, in order,
 * each at its own time. Requests waiting for a slot are timed by these, so the demo's timeline
 * is the same on every run and nothing sleeps.
 */
export function simulatedTime(start: number) {
  let now = start
  let nextId = 0
  const due = new Map<number, { readonly at: number; readonly run: () => void }>()
  const clock: Clock = { now: () => now }
  const timers: Timers = {
    setTimeout(run, ms) {
      due.set(++nextId, { at: now + Math.max(0, ms), run })
      return nextId
    },
    clearTimeout: (handle) => {
      due.delete(handle as number)
    },
  }
  return {
    clock,
    timers,
    now: () => now,
    /** How many timers are armed (the limiter arms one while anything waits). */
    armed: () => due.size,
    advanceTo(time: number): void {
      for (;;) {
        let first: [number, { at: number; run: () => void }] | undefined
        for (const entry of due) if (first === undefined || entry[1].at < first[1].at) first = entry
        if (first === undefined || first[1].at > time) break
        due.delete(first[0])
        now = Math.max(now, first[1].at)
        first[1].run()
      }
      now = Math.max(now, time)
    },
  }
}

/** Resolves once `ready()` holds, checking after each turn of the event loop (no timers). */
export async function until(ready: () => boolean): Promise<void> {
  for (let turns = 0; !ready(); turns++) {
    if (turns > 100_000) throw new Error('the gateway never got there')
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
