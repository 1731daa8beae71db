// Queues, concurrency slots, leases and clock steps forward, on an injected clock and timers.
import type { RuleConfig, Store } from '@tollgate/core'
import { memoryStore } from '@tollgate/core'
import type { StoreEvent } from '@tollgate/core/observe'
import { manualTime } from '@tollgate/test-utils'
import { linesOf, SLOT_WAIT_RULES } from '@tollgate/test-utils/metrics'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ATTRIBUTES as A, INSTRUMENTS as I } from './names.js'
import { meteredLimiters, meteredOnce } from './test-metrics.js'

const metered = meteredLimiters()
const facts = (ip = '198.51.100.4') => ({ method: 'GET', path: '/', identities: { ip } })

// 10 a second: one slot every 100 ms, up to 5 waiting.
const QUEUE: RuleConfig = {
  id: 'shaped',
  match: { identity: 'ip' },
  algorithm: 'leaky_queue',
  rate: 10,
  burst: 5,
}
const SLOTS: RuleConfig = { id: 'in-flight', match: {}, algorithm: 'concurrency', limit: 2 }

describe('queue instruments', () => {
  it('counts queued decisions, the line while it waits, and each wait once it ends', async () => {
    const time = manualTime(10_000)
    const limiter = metered.limiter({ rules: [QUEUE], clock: time.clock, timers: time.timers })
    const aborted = new AbortController()
    const served = [limiter.acquire(facts()), limiter.acquire(facts()), limiter.acquire(facts())]
    const gone = limiter.acquire(facts(), { signal: aborted.signal }).catch(() => 'gone')
    await time.advance(0)
    let metrics = await metered.collect()
    // The first goes at once; three wait (100, 200 and 300 ms).
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome])).toEqual([
      'shaped admitted = 1',
      'shaped queued = 3',
    ])
    expect(linesOf(metrics.get(I.charged), [A.rule])).toEqual(['shaped = 4'])
    expect(linesOf(metrics.get(I.queueLength), [A.rule])).toEqual(['shaped = 3'])
    await time.advance(150)
    aborted.abort()
    await expect(gone).resolves.toBe('gone')
    await time.advance(150)
    await Promise.all(served)
    metrics = await metered.collect()
    expect(linesOf(metrics.get(I.queueLength), [A.rule])).toEqual(['shaped = 0'])
    const waits = metrics.get(I.queueWait)!
    expect(linesOf(waits, [A.rule, A.queueResult])).toEqual([
      'shaped abandoned = 1',
      'shaped served = 2',
    ])
    // Served at 100 and 200 ms; the third left after 150 ms of its 300.
    const sum = (result: string) =>
      (waits.find((p) => p.attributes[A.queueResult] === result)!.value as { sum: number }).sum
    expect(sum('served')).toBeCloseTo(0.3, 9)
    expect(sum('abandoned')).toBeCloseTo(0.15, 9)
  })

  it('leaves waits out of the histograms when histograms are off, and still counts the line', async () => {
    const time = manualTime()
    const limiter = metered.limiter({
      rules: [QUEUE],
      clock: time.clock,
      timers: time.timers,
      metrics: { histograms: false },
    })
    const waiting = [limiter.acquire(facts()), limiter.acquire(facts())]
    await time.advance(0)
    expect(linesOf((await metered.collect()).get(I.queueLength), [])).toEqual([' = 1'])
    await time.advance(100)
    await Promise.all(waiting)
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.queueLength), [])).toEqual([' = 0'])
    expect(metrics.get(I.queueWait) ?? []).toEqual([])
  })
})

describe('concurrency instruments', () => {
  it('counts slots in use from admission to release (once per verdict), and refusals as shed', async () => {
    const limiter = metered.limiter({ rules: [SLOTS] })
    const verdicts = [0, 1, 2].map(() => limiter.decide(facts(), { now: 0 }))
    let metrics = await metered.collect()
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome])).toEqual([
      'in-flight admitted = 2',
      'in-flight shed = 1',
    ])
    expect(linesOf(metrics.get(I.slotsInUse), [A.rule])).toEqual(['in-flight = 2'])
    const [first, , refused] = verdicts as Awaited<(typeof verdicts)[number]>[]
    limiter.release?.(first!)
    limiter.release?.(first!)
    limiter.release?.(refused!)
    metrics = await metered.collect()
    expect(linesOf(metrics.get(I.slotsInUse), [A.rule])).toEqual(['in-flight = 1'])
  })

  it('follows a queued request into its slot: the verdict hold serves releases what it took', async () => {
    const time = manualTime()
    const limiter = metered.limiter({
      rules: [SLOTS, QUEUE],
      clock: time.clock,
      timers: time.timers,
    })
    const pending = [limiter.acquire(facts()), limiter.acquire(facts())]
    await time.advance(100)
    const served = await Promise.all(pending)
    expect(linesOf((await metered.collect()).get(I.slotsInUse), [])).toEqual([' = 2'])
    for (const verdict of served) limiter.release?.(verdict)
    expect(linesOf((await metered.collect()).get(I.slotsInUse), [])).toEqual([' = 0'])
  })

  it('sums slots as the store holds them, for any admissions and releases', async () => {
    const step = fc.oneof(fc.constant('take' as const), fc.nat({ max: 9 }))
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const local = meteredOnce()
        const limiter = local.limiter({ rules: [{ ...SLOTS, limit: 4 }] })
        const held: Awaited<ReturnType<typeof limiter.decide>>[] = []
        const released = new Set<number>()
        for (const s of steps) {
          if (s === 'take') held.push(await limiter.decide(facts(), { now: 0 }))
          else if (held.length > 0) {
            const i = s % held.length
            limiter.release?.(held[i]!)
            released.add(i)
          }
        }
        const inUse = held.filter((v, i) => v.allowed && !released.has(i)).length
        const metrics = await local.collect()
        await local.shutdown()
        expect(linesOf(metrics.get(I.slotsInUse), [])).toEqual(held.length ? [` = ${inUse}`] : [])
        // The store agrees: as many slots are free as the gauge says are not in use.
        const probe = await limiter.decide(facts(), { now: 0 })
        expect(probe.decisions[0]!.remaining).toBe(Math.max(0, 4 - inUse - 1))
      }),
      { numRuns: 30 },
    )
  })

  it('counts a request that waited for a slot once, as what its wait ended in', async () => {
    const time = manualTime(10_000)
    const limiter = metered.limiter({
      rules: SLOT_WAIT_RULES,
      clock: time.clock,
      timers: time.timers,
    })
    const report = (name: string) => ({ ...facts(), path: `/block/${name}` })
    const first = await limiter.acquire(report('first'))
    const next = limiter.acquire(report('next'))
    const late = limiter.acquire(report('late'))
    await time.advance(0)
    let metrics = await metered.collect()
    // Waiting: not counted yet, but in the line.
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome])).toEqual(['reports admitted = 1'])
    expect(linesOf(metrics.get(I.queueLength), [A.rule])).toEqual(['reports = 2'])
    await time.advance(500)
    limiter.release?.(first)
    const served = await next
    expect(served.allowed).toBe(true)
    metrics = await metered.collect()
    expect(linesOf(metrics.get(I.slotsInUse), [A.rule])).toEqual(['reports = 1'])
    await time.advance(1500)
    expect((await late).allowed).toBe(false)
    const leaving = new AbortController()
    const gone = limiter.acquire(report('gone'), { signal: leaving.signal }).catch(() => 'gone')
    await time.advance(100)
    leaving.abort()
    await expect(gone).resolves.toBe('gone')
    limiter.release?.(served)
    metrics = await metered.collect()
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome])).toEqual([
      'reports admitted = 1',
      'reports queued = 1',
      'reports shed = 2',
    ])
    expect(linesOf(metrics.get(I.charged), [A.rule])).toEqual(['reports = 2'])
    expect(linesOf(metrics.get(I.queueLength), [A.rule])).toEqual(['reports = 0'])
    expect(linesOf(metrics.get(I.slotsInUse), [A.rule])).toEqual(['reports = 0'])
    const waits = metrics.get(I.queueWait)!
    expect(linesOf(waits, [A.rule, A.queueResult])).toEqual([
      'reports abandoned = 1',
      'reports refused = 1',
      'reports served = 1',
    ])
    // The next one got the slot after 500 ms; the late one waited out its 2 s.
    const sum = (result: string) =>
      (waits.find((p) => p.attributes[A.queueResult] === result)!.value as { sum: number }).sum
    expect([sum('served'), sum('refused'), sum('abandoned')]).toEqual([0.5, 2, 0.1])
  })

  it('counts every request that may wait for a slot once, as its caller was answered', async () => {
    const step = fc.oneof(
      fc.constant({ arrive: true as const }),
      fc.record({ release: fc.nat({ max: 5 }) }),
      fc.record({ advance: fc.integer({ min: 1, max: 1500 }) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const time = manualTime(10_000)
        const local = meteredOnce()
        const limiter = local.limiter({
          rules: SLOT_WAIT_RULES,
          clock: time.clock,
          timers: time.timers,
        })
        const report = { ...facts(), path: '/block/report' }
        const held: Awaited<ReturnType<typeof limiter.acquire>>[] = []
        let [allowed, refused] = [0, 0]
        const arrivals: Promise<void>[] = []
        for (const s of steps) {
          if ('arrive' in s) {
            arrivals.push(
              limiter.acquire(report).then((verdict) => {
                if (!verdict.allowed) return void refused++
                allowed++
                held.push(verdict)
              }),
            )
          } else if ('release' in s) {
            if (held.length > 0) limiter.release?.(held.splice(s.release % held.length, 1)[0]!)
          } else await time.advance(s.advance)
          await time.advance(0)
        }
        // Every wait ends (a slot comes or maxWait passes); every slot is given back.
        for (let i = 0; i < steps.length + 2; i++) {
          while (held.length > 0) limiter.release?.(held.shift()!)
          await time.advance(2000)
        }
        await Promise.all(arrivals)
        const metrics = await local.collect()
        await local.shutdown()
        const count = (name: string, keys: string[], line: string) =>
          Number(
            linesOf(metrics.get(name), keys)
              .find((l) => l.startsWith(`${line} =`))
              ?.split(' = ')[1] ?? 0,
          )
        const outcome = (name: string) => count(I.decisions, [A.outcome], name)
        const waits = (result: string) => count(I.queueWait, [A.queueResult], result)
        expect(outcome('admitted') + outcome('queued')).toBe(allowed)
        expect(outcome('shed')).toBe(refused)
        expect(count(I.charged, [], '')).toBe(allowed)
        expect(waits('served')).toBe(outcome('queued'))
        // Every refusal had a line to wait in (the line being full refuses at once, waited 0).
        expect(waits('refused')).toBe(refused)
        expect(linesOf(metrics.get(I.queueLength), [])).toEqual(
          waits('served') + waits('refused') > 0 ? [' = 0'] : [],
        )
        expect(linesOf(metrics.get(I.slotsInUse), [])).toEqual(allowed > 0 ? [' = 0'] : [])
      }),
      { numRuns: 30 },
    )
  })

  it('counts leases a store expired, by rule', async () => {
    let tell: (event: StoreEvent) => void = () => {}
    const inner = memoryStore()
    const store: Store & { observe(listener: (event: StoreEvent) => void): void } = {
      consume: (charges, now) => inner.consume(charges, now),
      refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
      observe(listener) {
        tell = listener
      },
    }
    metered.limiter({ rules: [SLOTS], store })
    tell({ type: 'concurrency.lease-expired', rule: 'in-flight', count: 2 })
    tell({ type: 'concurrency.lease-expired', rule: 'in-flight', count: 1 })
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.leasesExpired), [A.rule])).toEqual(['in-flight = 3'])
  })
})
