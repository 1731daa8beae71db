// The spec's NGINX figure over real HTTP on every adapter: queued requests are held by the kit
// and released at their slots, on an injected clock and timers (nothing sleeps; the test only
// waits for sockets to deliver, and checks what it awaits each time a request is decided, an
// answer arrives or a timer is cleared: no polling interval).
import type { Timers } from '@tollgate/core'
import { memoryStore, type RuleConfig, type Store } from '@tollgate/express'
import { changes, manualTime } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import { type Exchange, normalise } from './exchange.js'
import { T0 } from './scenarios/index.js'
import { TARGETS } from './targets.js'

const queue = (extra: Record<string, unknown> = {}): RuleConfig =>
  ({
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'leaky_queue',
    rate: 10,
    burst: 20,
    ...extra,
  }) as RuleConfig

/** The memory store, counting the requests it has decided (so the test knows all have arrived). */
function countingStore(watch: ReturnType<typeof changes>): { store: Store; decided: () => number } {
  const inner = memoryStore()
  let decided = 0
  return {
    decided: () => decided,
    store: {
      consume(charges, now) {
        decided++
        watch.changed()
        return inner.consume(charges, now)
      },
      refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
    },
  }
}

/** The manual timers, telling `watch` when a wait is called off (a client left the line). */
function watchedTimers(timers: Timers, watch: ReturnType<typeof changes>): Timers {
  return {
    setTimeout: (callback, ms) => timers.setTimeout(callback, ms),
    clearTimeout(handle) {
      timers.clearTimeout(handle)
      watch.changed()
    },
  }
}

type Answer = { readonly at: number; readonly exchange: Exchange }

/**
 * Sends `count` requests at once at T0, then moves the clock 100 ms at a time for `steps` steps,
 * waiting after each for the responses due by then; returns every response with the (manual)
 * time it arrived.
 */
async function burst(
  target: (typeof TARGETS)[number],
  rule: RuleConfig,
  count: number,
  steps: number,
) {
  const time = manualTime(T0)
  const watch = changes()
  const { store, decided } = countingStore(watch)
  const client = await target.start({
    rules: [rule],
    options: { clock: time.clock, timers: time.timers, store, logger: false, legacyHeaders: true },
    clock: { now: time.now, advance: () => {}, set: () => {} },
    skip: () => false,
    refund: undefined,
    onShadowDenied: () => undefined,
    onAppError: (error) => {
      throw error
    },
  })
  const answers: Answer[] = []
  try {
    for (let i = 0; i < count; i++) {
      void client.send({ method: 'GET', path: '/', headers: {} }).then((exchange) => {
        answers.push({ at: time.now() - T0, exchange: normalise(exchange) })
        watch.changed()
      })
    }
    await watch.until(() => expect(decided()).toBe(count))
    const dueAt = (ms: number) => answers.filter((a) => a.at <= ms).length
    const servedBy = (ms: number) => count - expectedLater(rule, count, ms)
    await watch.until(() => expect(dueAt(0)).toBe(servedBy(0)))
    for (let step = 1; step <= steps; step++) {
      await time.advance(100)
      await watch.until(() => expect(answers.length).toBe(servedBy(step * 100)))
    }
    return answers
  } finally {
    await client.close()
  }
}

/** How many of `count` simultaneous requests are still waiting at `ms` (rate 10/s). */
function expectedLater(rule: RuleConfig, count: number, ms: number): number {
  const {
    burst: size,
    delay = 0,
    nodelay,
  } = rule as { burst: number; delay?: number; nodelay?: boolean }
  const served = Math.min(count, size + 1)
  const atOnce = nodelay ? served : Math.min(served, delay + 1)
  const released = Math.min(served - atOnce, Math.floor(ms / 100))
  return served - atOnce - released
}

const summary = (answers: readonly Answer[]) =>
  answers
    .map(({ at, exchange }) => ({
      at,
      status: exchange.status,
      remaining: exchange.headers['x-ratelimit-remaining'],
      retryAfter: exchange.headers['retry-after'],
    }))
    .sort((a, b) => a.at - b.at || a.status - b.status || Number(b.remaining) - Number(a.remaining))

const rejected = Array(4).fill({ at: 0, status: 429, remaining: '0', retryAfter: '1' })

describe.each(TARGETS)('a leaky queue on $name', (target) => {
  it('rate=10r/s burst=20, 25 at once: #1 now, #2–#21 one every 100 ms (the last at 2.0 s), #22–#25 429 with Retry-After', async () => {
    const answers = await burst(target, queue(), 25, 20)
    expect(summary(answers)).toEqual([
      { at: 0, status: 200, remaining: '20', retryAfter: undefined },
      ...rejected,
      // The request released at k × 100 ms was the (k + 1)-th decided: 20 − k left in line.
      ...Array.from({ length: 20 }, (_, i) => ({
        at: (i + 1) * 100,
        status: 200,
        remaining: String(19 - i),
        retryAfter: undefined,
      })),
    ])
    // Served with fields counted from its slot: the last one's line is empty 100 ms later.
    const last = answers.find((a) => a.at === 2000)!.exchange
    expect(last.headers['ratelimit']).toBe('"per-ip";r=0;t=1')
    expect(last.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + Math.ceil(2.1)))
  })

  it('with nodelay: #1–#21 served now, #22–#25 rejected', async () => {
    const answers = await burst(target, queue({ nodelay: true }), 25, 0)
    expect(summary(answers)).toEqual([
      ...Array.from({ length: 21 }, (_, i) => ({
        at: 0,
        status: 200,
        remaining: String(20 - i),
        retryAfter: undefined,
      })),
      ...rejected,
    ])
  })

  it('with delay: 10: the first 11 served now, the rest 100 ms apart', async () => {
    const answers = await burst(target, queue({ delay: 10 }), 25, 10)
    expect(summary(answers).map(({ at, status }) => [at, status])).toEqual([
      ...Array(11).fill([0, 200]),
      ...Array(4).fill([0, 429]),
      ...Array.from({ length: 10 }, (_, i) => [(i + 1) * 100, 200]),
    ])
  })
})

describe.each(
  // A connection to close: the targets on a real socket whose adapter hears of it (the guide's
  // Fastify adapter does not ask; app.request has no connection).
  TARGETS.filter((t) => !t.name.includes('fastify') && !t.name.includes('app.request')),
)('a client that leaves the queue on $name', (target) => {
  it('is dropped: its handler never runs, and its slot goes to the next arrival', async () => {
    const time = manualTime(T0)
    const watch = changes()
    const { store, decided } = countingStore(watch)
    const timers = watchedTimers(time.timers, watch)
    // The handler moves the clock for /fail/advance/<ms>: here it only tells that it ran.
    const handled: number[] = []
    const client = await target.start({
      rules: [queue({ burst: 2 })],
      options: { clock: time.clock, timers, store, logger: false },
      clock: { now: time.now, advance: () => handled.push(time.now() - T0), set: () => {} },
      skip: () => false,
      refund: undefined,
      onShadowDenied: () => undefined,
      onAppError: () => {},
    })
    try {
      const answers: Answer[] = []
      const send = (path: string) =>
        void client.send({ method: 'GET', path, headers: {} }).then((exchange) => {
          answers.push({ at: time.now() - T0, exchange: normalise(exchange) })
          watch.changed()
        })
      send('/')
      await watch.until(() => expect(answers).toHaveLength(1))
      // The second waits for 100 ms: its client goes away after 50.
      const leaving = new AbortController()
      const gone = fetch(`${client.origin!()}/fail/advance/0`, { signal: leaving.signal }).catch(
        () => 'gone',
      )
      await watch.until(() => expect(decided()).toBe(2))
      await time.advance(50)
      leaving.abort()
      expect(await gone).toBe('gone')
      // Dropped once the server hears of the close: nothing waits, so no timer is armed.
      await watch.until(() => expect(time.pending()).toBe(0))
      // The next arrival takes its slot: served at 100 ms, not 200.
      send('/')
      await watch.until(() => expect(decided()).toBe(3))
      await time.advance(50)
      await watch.until(() => expect(answers).toHaveLength(2))
      expect(answers[1]).toMatchObject({ at: 100, exchange: { status: 200 } })
      await time.advance(1000)
      expect(handled).toEqual([])
    } finally {
      await client.close()
    }
  })
})
