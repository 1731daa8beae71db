/**
 * One clock for a test's servers and clients, and timers that move it: whenever the client
 * arms a timer, the clock jumps to it on the next turn of the event loop and the timer fires.
 * Waits then take no real time, and a run is the same on a loaded machine. Only for tests that
 * send one request at a time (the jump must not happen while a request is on the wire) or that
 * do no I/O while waiting.
 */

import type { Timers } from '@tollgate/client'
import { type ManualClock, manualClock } from '@tollgate/test-utils'

export type VirtualTime = { readonly clock: ManualClock; readonly timers: Timers }

export function virtualTime(start: number): VirtualTime {
  const clock = manualClock(start)
  const pending = new Map<number, { at: number; callback: () => void }>()
  let nextId = 1
  let stepping = false

  function step(): void {
    stepping = false
    let next: [number, { at: number; callback: () => void }] | undefined
    for (const entry of pending) if (next === undefined || entry[1].at < next[1].at) next = entry
    if (next === undefined) return
    pending.delete(next[0])
    if (next[1].at > clock.now()) clock.set(next[1].at)
    next[1].callback()
    kick()
  }
  function kick(): void {
    if (stepping || pending.size === 0) return
    stepping = true
    setImmediate(step)
  }
  const timers: Timers = {
    setTimeout(callback, ms) {
      const id = nextId++
      pending.set(id, { at: clock.now() + Math.max(0, ms), callback })
      kick()
      return id
    },
    clearTimeout(handle) {
      pending.delete(handle as number)
    },
  }
  return { clock, timers }
}
