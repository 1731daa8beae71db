import type { Timers } from '@tollgate/core'

/**
 * A clock and timers that move only when a test says so: `advance(ms)` runs every timer that
 * falls due on the way, in order, each at its own time. Tests of anything that waits (queues, retries) use it with `clock` and `timers`.
 */
export function manualTime(start = 0) {
  let time = start
  let nextId = 1
  const pending = new Map<number, { at: number; callback: () => void }>()
  let mostPending = 0
  const timers: Timers = {
    setTimeout(callback, ms) {
      const id = nextId++
      pending.set(id, { at: time + Math.max(0, ms), callback })
      mostPending = Math.max(mostPending, pending.size)
      return id
    },
    clearTimeout(handle) {
      pending.delete(handle as number)
    },
  }
  function earliest(): [number, { at: number; callback: () => void }] | undefined {
    let found: [number, { at: number; callback: () => void }] | undefined
    for (const entry of pending) if (found === undefined || entry[1].at < found[1].at) found = entry
    return found
  }
  /** Lets promise callbacks run: a resolved acquisition continues its caller. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve()
  }
  return {
    clock: { now: () => time },
    timers,
    now: () => time,
    /** The most timers that were ever armed at once. */
    mostPending: () => mostPending,
    pending: () => pending.size,
    async advance(ms: number) {
      const until = time + ms
      await settle()
      for (let next = earliest(); next !== undefined && next[1].at <= until; next = earliest()) {
        pending.delete(next[0])
        time = Math.max(time, next[1].at)
        next[1].callback()
        await settle()
      }
      time = until
      await settle()
    },
    /** Runs timers one by one until none is left (or `limit` of them ran). */
    async runAll(limit = 100_000) {
      await settle()
      for (let i = 0, next = earliest(); next !== undefined && i < limit; next = earliest(), i++) {
        pending.delete(next[0])
        time = Math.max(time, next[1].at)
        next[1].callback()
        await settle()
      }
    },
  }
}
