// Queue rules through the limiter: acquire waits for the slot, several rules, shadow, aborts.
import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import type { Timers } from '../wait/scheduler.js'
import { createLimiter } from './create-limiter.js'
import { STORES } from './test-stores.js'
import type { Verdict } from './types.js'

/** A clock and timers that move only when the test says (as `manualTime` in test-utils). */
function fakeTime() {
  let time = 0
  let id = 0
  const pending = new Map<number, { at: number; run: () => void }>()
  const timers: Timers = {
    setTimeout(run, ms) {
      pending.set(++id, { at: time + ms, run })
      return id
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  }
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve()
  }
  return {
    clock: { now: () => time },
    timers,
    armed: () => pending.size,
    async advance(ms: number) {
      const until = time + ms
      await settle()
      for (;;) {
        const next = [...pending].sort((a, b) => a[1].at - b[1].at)[0]
        if (next === undefined || next[1].at > until) break
        pending.delete(next[0])
        time = next[1].at
        next[1].run()
        await settle()
      }
      time = until
      await settle()
    },
  }
}

const queue = (id: string, extra: Partial<Record<string, unknown>> = {}): RuleConfig =>
  ({
    id,
    match: { identity: 'ip' },
    algorithm: 'leaky_queue',
    rate: 10,
    burst: 20,
    ...extra,
  }) as never
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.9' } }

describe.each(STORES)('queue rules over a %s', (_name, makeStore) => {
  function setup(rules: readonly RuleConfig[]) {
    const time = fakeTime()
    const limiter = createLimiter({
      rules,
      store: makeStore(),
      clock: time.clock,
      timers: time.timers,
    })
    /** Acquires `count` requests at once; records when each one settled, and how. */
    const burst = (count: number) => {
      const settled: Array<{ at: number; verdict?: Verdict; error?: unknown }> = []
      const signals = Array.from({ length: count }, () => new AbortController())
      for (let i = 0; i < count; i++) {
        limiter.acquire(facts, { signal: signals[i]!.signal }).then(
          (verdict) => {
            settled[i] = { at: time.clock.now(), verdict }
          },
          (error: unknown) => {
            settled[i] = { at: time.clock.now(), error }
          },
        )
      }
      return { settled, signals }
    }
    return { time, limiter, burst }
  }

  it("releases the spec's figure at its slots: #1 now, #2–#21 every 100 ms, #22–#25 denied at once", async () => {
    const { time, burst } = setup([queue('q')])
    const { settled } = burst(25)
    await time.advance(0)
    expect(settled.filter((s) => s.verdict?.allowed === false)).toHaveLength(4)
    expect(settled[21]!.verdict).toMatchObject({ allowed: false, deciding: { retryAfterMs: 100 } })
    await time.advance(2000)
    expect(settled.slice(0, 21).map((s) => s.at)).toEqual(
      Array.from({ length: 21 }, (_, i) => i * 100),
    )
    expect(settled[20]!.verdict).toMatchObject({ allowed: true, waitMs: 2000 })
    // Served with the fields of the moment it left the line.
    expect(settled[20]!.verdict!.deciding).toMatchObject({ remaining: 0, resetAfterMs: 100 })
  })

  it('arms one timer for every waiting request, and none once the line is empty', async () => {
    const { time, burst } = setup([queue('q')])
    burst(21)
    await time.advance(0)
    expect(time.armed()).toBe(1)
    await time.advance(2000)
    expect(time.armed()).toBe(0)
  })

  it('drops a request whose signal aborts while it waits, and gives its slot to the next arrival', async () => {
    const { time, limiter, burst } = setup([queue('q', { burst: 3 })])
    const { settled, signals } = burst(4)
    await time.advance(0)
    signals[3]!.abort(new Error('gone'))
    await time.advance(0)
    expect(settled[3]).toEqual({ at: 0, error: new Error('gone') })
    // The freed slot (300 ms) is the next arrival's, not a later one.
    const next = limiter.acquire(facts)
    let servedAt = -1
    next.then(() => {
      servedAt = time.clock.now()
    })
    await time.advance(1000)
    expect(servedAt).toBe(300)
    expect(settled.slice(0, 3).map((s) => s.at)).toEqual([0, 100, 200])
  })

  it('refuses at once, holding nothing, a request whose signal has already aborted', async () => {
    const { time, limiter } = setup([queue('q', { burst: 1 })])
    await limiter.acquire(facts)
    const aborted = AbortSignal.abort(new Error('gone'))
    await expect(limiter.acquire(facts, { signal: aborted })).rejects.toThrow('gone')
    const next = await limiter.decide(facts)
    expect(next).toMatchObject({ allowed: true, waitMs: 100 })
    await time.advance(0)
  })

  it('waits for the latest slot among its queue rules; a request another rule denies holds no slot', async () => {
    const { time, limiter, burst } = setup([
      queue('fast', { rate: 10, burst: 20 }),
      queue('slow', { rate: 4, burst: 20 }),
      { id: 'cap', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 3, window: '1h' },
    ])
    const { settled } = burst(4)
    await time.advance(1000)
    expect(settled.map((s) => s.at)).toEqual([0, 250, 500, 0])
    expect(settled[3]!.verdict).toMatchObject({ allowed: false, deciding: { rule: 'cap' } })
    // The denied one took no slot of either queue: a look at cost 0 finds them where 3 left them.
    const look = await limiter.check('ip:192.0.2.9', 'slow', { cost: 0, now: 0 })
    expect(look).toMatchObject({ remaining: 21 - 3 })
    await time.advance(0)
  })

  it('reports how long a shadow queue rule would have delayed, and delays nothing', async () => {
    const { time, limiter } = setup([queue('q', { mode: 'shadow' })])
    await limiter.acquire(facts)
    const second = await limiter.acquire(facts)
    expect(second.waitMs).toBeUndefined()
    expect(second.decisions[0]).toMatchObject({ rule: 'q', mode: 'shadow', delayMs: 100 })
    await time.advance(0)
  })
})
