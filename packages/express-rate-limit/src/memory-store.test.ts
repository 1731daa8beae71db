import { manualClock } from '@tollgate/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryStore } from './index.js'

const T0 = Date.UTC(2026, 0, 1)
const options = (windowMs: number) => ({ windowMs }) as never

/** The store with the number of keys its core store holds in view. */
class Probe extends MemoryStore {
  get held(): number {
    return this.store.size
  }
}

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('MemoryStore: a key whose hits are all given back', () => {
  it('is still known, with no hits, until its window ends', async () => {
    const clock = manualClock(T0)
    const store = new MemoryStore(undefined, clock)
    store.init(options(60_000))
    await store.increment('k')
    clock.advance(10_000)
    await store.decrement('k')
    await store.decrement('k')
    expect(await store.get('k')).toEqual({ totalHits: 0, resetTime: new Date(T0 + 60_000) })
    expect((await store.increment('k')).totalHits).toBe(1)
    await store.decrement('k')
    clock.advance(50_000)
    expect(await store.get('k')).toBeUndefined()
    store.shutdown()
  })

  it('is forgotten by resetKey, and a key never counted is unknown', async () => {
    const clock = manualClock(T0)
    const store = new MemoryStore(undefined, clock)
    store.init(options(60_000))
    expect(await store.get('never')).toBeUndefined()
    await store.increment('k')
    await store.decrement('k')
    await store.resetKey('k')
    expect(await store.get('k')).toBeUndefined()
    clock.advance(1_000)
    expect((await store.increment('k')).resetTime).toEqual(new Date(T0 + 61_000))
    store.shutdown()
  })
})

describe('MemoryStore: the timer that reclaims ended windows', () => {
  it('is unref’d, so it never keeps the process alive', () => {
    const store = new MemoryStore()
    store.init(options(60_000))
    expect(store.interval).toBeDefined()
    expect((store.interval as unknown as { hasRef(): boolean }).hasRef()).toBe(false)
    store.shutdown()
  })

  it('drops, every windowMs, the keys whose window has ended and keeps the others', async () => {
    vi.useFakeTimers()
    const clock = manualClock(T0)
    const store = new Probe(undefined, clock)
    store.init(options(1_000))
    await store.increment('early')
    await store.increment('other')
    clock.advance(600)
    await store.increment('late')
    expect(store.held).toBe(3)
    clock.advance(400)
    vi.advanceTimersByTime(1_000)
    expect(store.held).toBe(1)
    expect((await store.get('late'))?.totalHits).toBe(1)
    clock.advance(600)
    vi.advanceTimersByTime(1_000)
    expect(store.held).toBe(0)
    store.shutdown()
  })

  it('is replaced when init is called again, and stopped by shutdown', () => {
    vi.useFakeTimers()
    const cleared = vi.spyOn(globalThis, 'clearInterval')
    const store = new MemoryStore()
    store.init(options(60_000))
    const first = store.interval
    store.init(options(30_000))
    expect(cleared).toHaveBeenCalledWith(first)
    expect(store.interval).not.toBe(first)
    expect(vi.getTimerCount()).toBe(1)
    store.shutdown()
    expect(cleared).toHaveBeenLastCalledWith(store.interval)
    expect(vi.getTimerCount()).toBe(0)
  })
})
