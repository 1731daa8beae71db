// Requests waiting for a concurrency slot, through the limiter: the line's order, its length,
// its longest wait, aborts, and a model-checked property of the slot accounting, on each shape
// of store. Time is a fake clock and timers; nothing sleeps.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import type { Timers } from '../wait/scheduler.js'
import { createLimiter } from './create-limiter.js'
import { STORES } from './test-stores.js'
import type { Limiter, Verdict } from './types.js'

/** Lets every pending promise callback run (the microtask queue drains before setImmediate). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

function fakeTime() {
  let time = 1_000_000
  let id = 0
  const pending = new Map<number, { at: number; run: () => void }>()
  const timers: Timers = {
    setTimeout(run, ms) {
      pending.set(++id, { at: time + ms, run })
      return id
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  }
  return {
    clock: { now: () => time },
    timers,
    now: () => time,
    armed: () => pending.size,
    async advance(ms: number) {
      const until = time + ms
      await flush()
      for (;;) {
        const next = [...pending].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0]
        if (next === undefined || next[1].at > until) break
        pending.delete(next[0])
        time = next[1].at
        next[1].run()
        await flush()
      }
      time = until
      await flush()
    },
  }
}

const slots = (extra: Record<string, unknown> = {}): RuleConfig =>
  ({
    id: 'reports',
    match: { route: 'GET /reports' },
    algorithm: 'concurrency',
    limit: 1,
    queue: 2,
    maxWait: '500ms',
    ...extra,
  }) as RuleConfig

const REPORT = { method: 'GET', path: '/reports', identities: { ip: '192.0.2.1' } }

type Outcome = { readonly status: 'pending' | 'admitted' | 'refused' | 'gone'; verdict?: Verdict }

/** Acquires `facts`, recording how the wait ended. */
function arrive(limiter: Limiter, signal?: AbortSignal, facts = REPORT) {
  const outcome: { status: Outcome['status']; verdict?: Verdict; settled: number } = {
    status: 'pending',
    settled: 0,
  }
  limiter.acquire(facts, { signal }).then(
    (verdict) => {
      outcome.settled++
      outcome.status = verdict.allowed ? 'admitted' : 'refused'
      outcome.verdict = verdict
    },
    () => {
      outcome.settled++
      outcome.status = 'gone'
    },
  )
  return outcome
}

function setup(rules: RuleConfig[], store?: (typeof STORES)[number][1]) {
  const time = fakeTime()
  const limiter = createLimiter({
    rules,
    clock: time.clock,
    timers: time.timers,
    logger: false,
    ...(store === undefined ? {} : { store: store() }),
  })
  const held = async () => {
    const d = await limiter.check('*', 'reports', { cost: 0 })
    return d.limit - d.remaining
  }
  return { time, limiter, held }
}

describe.each(STORES)('waiting for a concurrency slot (%s)', (_name, store) => {
  it('a freed slot goes to the oldest waiter; a full line refuses the newcomer at once', async () => {
    const { time, limiter, held } = setup([slots()], store)
    const [a, b, c, d] = [arrive(limiter), arrive(limiter), arrive(limiter), arrive(limiter)]
    await flush()
    expect([a, b, c, d].map((o) => o.status)).toEqual(['admitted', 'pending', 'pending', 'refused'])
    expect(d.verdict).toMatchObject({ allowed: false, reason: 'limit' })
    expect(d.verdict!.deciding).toMatchObject({ rule: 'reports', retryAfterMs: 1000 })
    expect(d.verdict!.waitsForSlot).toBeUndefined()
    await limiter.release!(a.verdict!)
    await flush()
    expect([b.status, c.status]).toEqual(['admitted', 'pending'])
    expect(await held()).toBe(1)
    await limiter.release!(b.verdict!)
    await flush()
    expect(c.status).toBe('admitted')
    await limiter.release!(c.verdict!)
    expect(await held()).toBe(0)
    expect(time.armed()).toBe(0)
  })

  it('lifo: a freed slot goes to the newest waiter, and a full line refuses its oldest', async () => {
    const { limiter } = setup([slots({ queueOrder: 'lifo' })], store)
    const [a, b, c] = [arrive(limiter), arrive(limiter), arrive(limiter)]
    await flush()
    const d = arrive(limiter)
    await flush()
    expect([a, b, c, d].map((o) => o.status)).toEqual(['admitted', 'refused', 'pending', 'pending'])
    await limiter.release!(a.verdict!)
    await flush()
    expect([c.status, d.status]).toEqual(['pending', 'admitted'])
  })

  it('a waiter whose wait is over is refused with Retry-After, and holds nothing', async () => {
    const { time, limiter, held } = setup([slots()], store)
    const a = arrive(limiter)
    await flush()
    const b = arrive(limiter)
    await time.advance(499)
    expect(b.status).toBe('pending')
    await time.advance(1)
    expect(b.status).toBe('refused')
    expect(b.verdict!.deciding).toMatchObject({ rule: 'reports', retryAfterMs: 1000 })
    await limiter.release!(a.verdict!)
    await flush()
    expect(await held()).toBe(0)
    expect(time.armed()).toBe(0)
  })

  it('a waiter whose signal aborts leaves the line: the slot goes to the one behind it', async () => {
    const { time, limiter } = setup([slots()], store)
    const a = arrive(limiter)
    await flush()
    const leaving = new AbortController()
    const b = arrive(limiter, leaving.signal)
    const c = arrive(limiter)
    await flush()
    leaving.abort(new Error('gone'))
    await flush()
    expect(b.status).toBe('gone')
    await limiter.release!(a.verdict!)
    await flush()
    expect(c.status).toBe('admitted')
    expect(time.armed()).toBe(0)
  })

  it('a waiter another rule refuses once woken is answered with that refusal; the slot goes on', async () => {
    const perIp: RuleConfig = {
      id: 'per-ip',
      match: { identity: 'ip' },
      algorithm: 'token_bucket',
      rate: 1,
      period: '1h',
      burst: 2,
    }
    const { limiter, held } = setup([slots(), perIp], store)
    const a = arrive(limiter)
    await flush()
    const b = arrive(limiter)
    const c = arrive(limiter, undefined, { ...REPORT, identities: { ip: '192.0.2.2' } })
    await flush()
    // b's client spends its last token elsewhere while b waits.
    await limiter.decide({ method: 'GET', path: '/other', identities: { ip: '192.0.2.1' } })
    await limiter.release!(a.verdict!)
    await flush()
    expect(b.status).toBe('refused')
    expect(b.verdict!.deciding!.rule).toBe('per-ip')
    expect(c.status).toBe('admitted')
    expect(await held()).toBe(1)
  })
})

/** Two processes' limiters on one store they both decide in, as two gateways on one Redis. */
function twoProcesses(shared: boolean, rules: RuleConfig[] = [slots({ maxWait: '10s' })]) {
  const time = fakeTime()
  const inner = memoryStore()
  const calls = { consume: 0 }
  const store: Store = {
    consume: async (charges, now) => {
      calls.consume++
      return inner.consume(charges, now)
    },
    refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
    ...(shared ? { shared: true } : {}),
  }
  const limiterOf = () =>
    createLimiter({ rules, clock: time.clock, timers: time.timers, logger: false, store })
  return { time, calls, here: limiterOf(), there: limiterOf() }
}

describe('waiting for a slot another process gives back', () => {
  it('on a shared store, the line looks again every second and takes the slot', async () => {
    const { time, here, there } = twoProcesses(true)
    const holder = arrive(there)
    await flush()
    const waiter = arrive(here)
    await flush()
    expect([holder.status, waiter.status]).toEqual(['admitted', 'pending'])
    await there.release!(holder.verdict!)
    // Nothing here heard of it: the line finds it when it next looks.
    await time.advance(999)
    expect(waiter.status).toBe('pending')
    await time.advance(1)
    expect(waiter.status).toBe('admitted')
    // The line is gone with its last waiter, and so is its timer.
    await here.release!(waiter.verdict!)
    expect(time.armed()).toBe(0)
  })

  it('looks every quarter of a maxWait shorter than a second, one store call per line', async () => {
    const { time, calls, here, there } = twoProcesses(true, [slots({ maxWait: '400ms' })])
    const holder = arrive(there)
    await flush()
    const [first, second] = [arrive(here), arrive(here)]
    await flush()
    await time.advance(150)
    await there.release!(holder.verdict!)
    await time.advance(49)
    expect([first.status, second.status]).toEqual(['pending', 'pending'])
    const before = calls.consume
    await time.advance(1)
    expect([first.status, second.status]).toEqual(['admitted', 'pending'])
    expect(calls.consume - before).toBe(1)
    await time.advance(200)
    expect(second.status).toBe('refused')
    expect(time.armed()).toBe(0)
  })

  it('on a store only this process uses, sets no timer beyond the wait itself', async () => {
    const { time, here, there } = twoProcesses(false)
    const holder = arrive(there)
    await flush()
    const waiter = arrive(here)
    await flush()
    expect(time.armed()).toBe(1)
    await there.release!(holder.verdict!)
    await time.advance(10_000)
    expect(waiter.status).toBe('refused')
  })
})

type Step =
  | { readonly kind: 'arrive'; readonly abortable: boolean }
  | { readonly kind: 'release'; readonly pick: number }
  | { readonly kind: 'abort'; readonly pick: number }
  | { readonly kind: 'advance'; readonly ms: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('arrive' as const), abortable: fc.boolean() }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 400 }) }),
)

describe.each(STORES)(
  'slot accounting under random takes, releases, aborts and timeouts (%s)',
  (_name, store) => {
    it('matches the model: never more than limit held, every waiter settled exactly once, in order', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 3 }),
          fc.constantFrom('fifo' as const, 'lifo' as const),
          fc.array(step, { maxLength: 40 }),
          async (limit, queue, order, steps) => {
            const maxWait = 500
            const { time, limiter, held } = setup(
              [slots({ limit, queue, queueOrder: order, maxWait: `${maxWait}ms` })],
              store,
            )
            type Request = ReturnType<typeof arrive> & {
              readonly abort: AbortController | undefined
              readonly deadline: number
            }
            const requests: Request[] = []
            // The model: who holds a slot, who waits (oldest first), what each ended as.
            const holding: Request[] = []
            let line: Request[] = []
            const expected = new Map<Request, Outcome['status']>()
            const admit = (r: Request) => {
              holding.push(r)
              expected.set(r, 'admitted')
            }
            for (const s of steps) {
              if (s.kind === 'arrive') {
                const abort = s.abortable ? new AbortController() : undefined
                // The record `arrive` returns is updated in place: keep that object.
                const r: Request = Object.assign(arrive(limiter, abort?.signal), {
                  abort,
                  deadline: time.now() + maxWait,
                })
                requests.push(r)
                if (holding.length < limit) admit(r)
                else if (line.length < queue) line.push(r)
                else if (order === 'fifo') expected.set(r, 'refused')
                else {
                  expected.set(line.shift()!, 'refused')
                  line.push(r)
                }
                if (!expected.has(r)) expected.set(r, 'pending')
              } else if (s.kind === 'release' && holding.length > 0) {
                const [r] = holding.splice(s.pick % holding.length, 1)
                await limiter.release!(r!.verdict!)
                const next = order === 'fifo' ? line.shift() : line.pop()
                if (next !== undefined) admit(next)
              } else if (s.kind === 'abort') {
                const abortable = line.filter((r) => r.abort !== undefined)
                if (abortable.length === 0) continue
                const r = abortable[s.pick % abortable.length]!
                line = line.filter((other) => other !== r)
                expected.set(r, 'gone')
                r.abort!.abort(new Error('gone'))
              } else if (s.kind === 'advance') {
                const until = time.now() + s.ms
                for (const r of line.filter((w) => w.deadline <= until)) expected.set(r, 'refused')
                line = line.filter((w) => w.deadline > until)
                await time.advance(s.ms)
              }
              await flush()
              for (const r of requests) expect(r.status).toBe(expected.get(r))
              expect(await held()).toBe(holding.length)
              expect(holding.length).toBeLessThanOrEqual(limit)
            }
            // Everyone still waiting is refused at the end of their wait; every slot comes back.
            await time.advance(maxWait)
            for (const r of holding) await limiter.release!(r.verdict!)
            await flush()
            expect(await held()).toBe(0)
            expect(time.armed()).toBe(0)
            for (const r of requests) expect(r.settled).toBe(1)
          },
        ),
        { numRuns: 60 },
      )
    }, 120_000)
  },
)

/**
 * A store that applies each call after some promise hops and replies after some more, as a
 * remote store does: the hops are taken from `delays` in turn.
 */
function remoteStore(delays: readonly number[]): Store {
  const inner = memoryStore()
  let turn = 0
  const hops = async () => {
    const n = delays[turn++ % delays.length]!
    for (let i = 0; i < n; i++) await Promise.resolve()
  }
  return {
    async consume(charges, now) {
      await hops()
      const outcome = inner.consume(charges, now)
      await hops()
      return outcome
    },
    async refund(charges, chargedAt, now) {
      await hops()
      inner.refund(charges, chargedAt, now)
      await hops()
    },
  }
}

describe('slot accounting when releases, arrivals and replies of a remote store interleave', () => {
  it('never holds more than limit, never leaves a slot free while someone waits, settles each once', async () => {
    const interleaved = fc.record({ step, flushAfter: fc.boolean() })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('fifo' as const, 'lifo' as const),
        fc.array(interleaved, { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 16 }),
        async (limit, queue, order, steps, delays) => {
          const { time, limiter, held } = setup(
            [slots({ limit, queue, queueOrder: order, maxWait: '500ms' })],
            () => remoteStore(delays),
          )
          const requests: Array<ReturnType<typeof arrive> & { abort?: AbortController }> = []
          const released = new Set<Verdict>()
          const check = async () => {
            await flush()
            const inUse = await held()
            expect(inUse).toBeLessThanOrEqual(limit)
            expect(inUse).toBe(
              requests.filter((r) => r.status === 'admitted' && !released.has(r.verdict!)).length,
            )
            // A slot free while a request waits for one is a lost slot.
            if (requests.some((r) => r.status === 'pending')) expect(inUse).toBe(limit)
          }
          for (const { step: s, flushAfter } of steps) {
            if (s.kind === 'arrive') {
              const abort = s.abortable ? new AbortController() : undefined
              requests.push(Object.assign(arrive(limiter, abort?.signal), { abort }))
            } else if (s.kind === 'release') {
              const holding = requests.filter(
                (r) => r.status === 'admitted' && !released.has(r.verdict!),
              )
              if (holding.length === 0) continue
              const verdict = holding[s.pick % holding.length]!.verdict!
              released.add(verdict)
              void limiter.release!(verdict)
            } else if (s.kind === 'abort') {
              const waiting = requests.filter((r) => r.abort && !r.abort.signal.aborted)
              if (waiting.length > 0)
                waiting[s.pick % waiting.length]!.abort!.abort(new Error('gone'))
            } else await time.advance(s.ms)
            if (flushAfter) await check()
          }
          await check()
          await time.advance(500)
          for (const r of requests) {
            if (r.status === 'admitted' && !released.has(r.verdict!)) {
              released.add(r.verdict!)
              await limiter.release!(r.verdict!)
            }
          }
          await flush()
          expect(await held()).toBe(0)
          expect(time.armed()).toBe(0)
          for (const r of requests) expect(r.settled).toBe(1)
        },
      ),
      { numRuns: 400 },
    )
  }, 120_000)
})
