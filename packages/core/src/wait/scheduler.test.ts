import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScheduler, type Timers } from './scheduler.js'

/** A clock and timers that move only when the test says: `advance` fires due timers in order. */
function fakeTime() {
  let time = 0
  let nextId = 1
  const pending = new Map<number, { at: number; callback: () => void }>()
  const timers: Timers = {
    setTimeout(callback, ms) {
      pending.set(nextId, { at: time + ms, callback })
      return nextId++
    },
    clearTimeout(handle) {
      pending.delete(handle as number)
    },
  }
  return {
    clock: { now: () => time },
    timers,
    armed: () => pending.size,
    advance(ms: number) {
      const end = time + ms
      for (;;) {
        let next: [number, { at: number; callback: () => void }] | undefined
        for (const entry of pending) if (!next || entry[1].at < next[1].at) next = entry
        if (next === undefined || next[1].at > end) break
        pending.delete(next[0])
        time = Math.max(time, next[1].at)
        next[1].callback()
      }
      time = end
    },
  }
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve()
}

describe('createScheduler', () => {
  it('runs every live entry at its time, in order of time then arrival, with at most one timer armed', () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('at' as const), delay: fc.integer({ min: 0, max: 500 }) }),
      fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
    )
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
        const time = fakeTime()
        const scheduler = createScheduler(time)
        const model: Array<{ at: number; id: number; cancelled: boolean; cancel: () => void }> = []
        const ran: Array<{ id: number; at: number; ranAt: number }> = []
        let id = 0
        for (const op of operations) {
          if (op.kind === 'at') {
            const at = time.clock.now() + op.delay
            const own = id++
            const cancel = scheduler.at(at, () =>
              ran.push({ id: own, at, ranAt: time.clock.now() }),
            )
            model.push({ at, id: own, cancelled: false, cancel })
          } else if (op.kind === 'cancel' && model.length > 0) {
            const entry = model[op.pick % model.length]!
            entry.cancel()
            if (!ran.some((r) => r.id === entry.id)) entry.cancelled = true
          } else if (op.kind === 'advance') time.advance(op.ms)
          expect(time.armed()).toBeLessThanOrEqual(1)
          const waiting = model.filter((e) => !e.cancelled && !ran.some((r) => r.id === e.id))
          expect(scheduler.waiting()).toBe(waiting.length)
          expect(time.armed()).toBe(waiting.length > 0 ? 1 : 0)
        }
        time.advance(1_000)
        const expected = model
          .filter((e) => !e.cancelled)
          .sort((a, b) => a.at - b.at || a.id - b.id)
          .map((e) => e.id)
        // Entries due in one firing run in heap order; across firings, in time order.
        expect(ran.map((r) => r.id)).toEqual(expected)
        for (const r of ran) expect(r.ranAt).toBe(r.at)
        expect(time.armed()).toBe(0)
      }),
      { numRuns: 300 },
    )
  })

  it('keeps the heap small when most entries are cancelled', () => {
    const time = fakeTime()
    const scheduler = createScheduler(time)
    const cancels = Array.from({ length: 10_000 }, (_, i) => scheduler.at(1_000 + i, () => {}))
    for (const cancel of cancels.slice(1)) cancel()
    expect(scheduler.waiting()).toBe(1)
    let ran = 0
    scheduler.at(5, () => ran++)
    time.advance(5)
    expect(ran).toBe(1)
    expect(scheduler.waiting()).toBe(1)
  })

  it('resolves `until` at its time and rejects with the reason when aborted first', async () => {
    const time = fakeTime()
    const scheduler = createScheduler(time)
    const controller = new AbortController()
    const results: string[] = []
    scheduler.until(100).then(() => results.push('first'))
    scheduler
      .until(200, controller.signal)
      .catch((reason) => results.push(`second ${reason as string}`))
    time.advance(150)
    await settle()
    controller.abort('gone')
    await settle()
    expect(results).toEqual(['first', 'second gone'])
    expect(scheduler.waiting()).toBe(0)
    expect(time.armed()).toBe(0)
    await expect(scheduler.sleep(10, controller.signal)).rejects.toBe('gone')
  })

  it('runs the other due entries and re-arms when one throws', () => {
    const time = fakeTime()
    const scheduler = createScheduler(time)
    const ran: number[] = []
    scheduler.at(10, () => {
      throw new Error('boom')
    })
    scheduler.at(10, () => ran.push(10))
    scheduler.at(20, () => ran.push(20))
    expect(() => time.advance(10)).toThrow('boom')
    time.advance(10)
    expect(ran).toEqual([10, 20])
  })

  it('waits again when its timer fires before the entry is due', () => {
    const time = fakeTime()
    let early: (() => void) | undefined
    const scheduler = createScheduler({
      clock: time.clock,
      timers: {
        setTimeout: (callback) => {
          early = callback
          return 1
        },
        clearTimeout: () => {},
      },
    })
    let ran = 0
    scheduler.at(50, () => ran++)
    early!()
    expect(ran).toBe(0)
    expect(scheduler.waiting()).toBe(1)
  })
})
