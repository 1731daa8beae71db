import { fixedWindow, tokenBucket } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import { type LimiterStorage, stateTable } from './object-states.js'

/** A Durable Object's storage in a Map, with its one alarm. */
function mapStorage() {
  const entries = new Map<string, unknown>()
  let alarm: number | null = null
  const storage: LimiterStorage = {
    list: async <T>() => new Map(entries) as Map<string, T>,
    put: async (values) => {
      for (const [key, value] of Object.entries(values)) entries.set(key, structuredClone(value))
    },
    delete: async (keys) => keys.filter((key) => entries.delete(key)).length,
    getAlarm: async () => alarm,
    setAlarm: async (time) => {
      alarm = time
    },
  }
  /** The runtime clears an alarm as it runs the object's `alarm()`. */
  const ring = () => {
    alarm = null
  }
  return { storage, entries, alarm: () => alarm, ring }
}

const window = fixedWindow({ limit: 10, windowMs: 60_000 })
const bucket = tokenBucket({ rate: 1, periodMs: 1000, burst: 10 })

describe('an object’s states', () => {
  it('are written through, and read back by an object started again', async () => {
    const { storage } = mapStorage()
    const table = stateTable(storage)
    await table.load()
    const state = [0, 4] // a window from 0 with 4 taken
    await table.write(new Map([['w', [window, state]]]), 1_000, 5_000_000)
    const restarted = stateTable(storage)
    await restarted.load()
    expect(restarted.copyOf('w')).toEqual([0, 4])
  })

  it('set the alarm for when the last is back to full capacity, on the object’s clock', async () => {
    const { storage, entries, alarm, ring } = mapStorage()
    const table = stateTable(storage)
    await table.load()
    // Caller time 1 000: the window ends at 60 000, 59 s later; the object's clock reads 5 000 000.
    await table.write(new Map([['w', [window, [0, 4]]]]), 1_000, 5_000_000)
    // The bucket lacks 3 tokens at caller time 1 000: full 3 s later.
    const level = 7 * 1000
    await table.write(new Map([['b', [bucket, [level, 1_000]]]]), 1_000, 5_000_000)
    const due = alarm()!
    expect(due).toBeGreaterThanOrEqual(5_059_000)
    // The bucket is full by the alarm; the window too.
    // An alarm early (none is, but one set by an earlier write may be) keeps what is not fresh.
    ring()
    await table.expire(5_003_000)
    expect([...entries.keys()]).toEqual(['w'])
    expect(alarm()).toBe(due)
    ring()
    await table.expire(due)
    expect(entries.size).toBe(0)
    expect(alarm()).toBeNull()
  })

  it('delete a state written back at full capacity instead of keeping it', async () => {
    const { storage, entries } = mapStorage()
    const table = stateTable(storage)
    await table.load()
    await table.write(new Map([['b', [bucket, [7000, 1_000]]]]), 1_000, 0)
    expect(entries.size).toBe(1)
    // Refilled to 10 tokens (10 000 units) at 4 000: full, so nothing to keep.
    await table.write(new Map([['b', [bucket, [10_000, 4_000]]]]), 4_000, 3_000)
    expect(entries.size).toBe(0)
    expect(table.copyOf('b')).toBeUndefined()
  })
})
