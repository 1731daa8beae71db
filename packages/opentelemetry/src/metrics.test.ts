import { fallbackStore, memoryStore } from '@tollgate/core'
import { observedLimiter, shadowReport } from '@tollgate/core/observe'
import { linesOf, METRIC_RULES as RULES } from '@tollgate/test-utils/metrics'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { tollgateMetrics } from './metrics.js'
import { ATTRIBUTES as A, INSTRUMENTS as I } from './names.js'
import { shadowReportMetrics } from './shadow-metrics.js'
import { meteredLimiters, meteredOnce } from './test-metrics.js'

const get = (ip: string) => ({ method: 'GET', path: '/', identities: { ip } })
const login = (ip: string) => ({ method: 'POST', path: '/login', identities: { ip } })

const metered = meteredLimiters()

describe('tollgateMetrics', () => {
  it('counts a scripted trace exactly: decisions, charges, remaining at admission, store calls', async () => {
    const store = memoryStore()
    const limiter = metered.limiter({ rules: RULES, store })
    for (const facts of [get('a'), login('a'), login('a'), get('b'), login('b')]) {
      limiter.decide(facts, { now: 1000 })
    }
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome, A.mode])).toEqual([
      'new-login admitted shadow = 2',
      'new-login shadow-denied shadow = 1',
      'per-ip admitted enforce = 4',
      'per-ip denied enforce = 1',
    ])
    // The denied request charged nothing; the shadow denial neither.
    expect(linesOf(metrics.get(I.charged), [A.rule, A.mode])).toEqual([
      'new-login shadow = 2',
      'per-ip enforce = 4',
    ])
    const ratio = metrics.get(I.remainingRatio)!.find((p) => p.attributes[A.rule] === 'per-ip')!
    // Left after each admission: a 1, a 0, b 1, b 0 (of 2): 0.5 + 0 + 0.5 + 0.
    expect(ratio.value).toEqual({ count: 4, sum: 1 })
    // The memory store's calls are not timed (they take less than two clock reads).
    expect(metrics.get(I.storeDuration)).toBeUndefined()
    expect(linesOf(metrics.get(I.memoryEntries), [])).toEqual([' = 4'])
    expect(store.size).toBe(4)
    expect(linesOf(metrics.get(I.memoryBytes), [])).toEqual([` = ${store.bytes}`])
    expect(linesOf(metrics.get(I.memoryEvictions), [])).toEqual([' = 0'])
  })

  it('counts store failures by kind, operation and reason, and each rule as failed open or closed', async () => {
    const down = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:6379'))
    const limiter = metered.limiter({
      rules: [{ ...RULES[0]!, onStoreError: 'closed' }, RULES[1]!],
      store: { consume: down, refund: down },
      storeTimeoutMs: false,
      logger: false,
    })
    await limiter.decide(login('203.0.113.7'))
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome])).toEqual([
      'new-login store-failed-open = 1',
      'per-ip store-failed-closed = 1',
    ])
    expect(
      linesOf(metrics.get(I.storeErrors), [A.storeKind, A.storeOperation, A.errorType]),
    ).toEqual(['custom consume error = 1'])
    expect(linesOf(metrics.get(I.storeDuration), [A.storeKind, A.errorType])).toEqual([
      'custom error = 1',
    ])
  })

  it('counts decisions made in-process while the shared store fails apart, with the degraded attribute', async () => {
    const down = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:6379'))
    const limiter = metered.limiter({
      rules: [{ ...RULES[0]!, onStoreError: 'fallback' }],
      store: fallbackStore({ consume: down, refund: down }, { instances: 2, logger: false }),
      storeTimeoutMs: false,
      logger: false,
    })
    await limiter.decide(get('203.0.113.7'), { now: 0 }) // a share of 1 (burst 2 ÷ 2)
    await limiter.decide(get('203.0.113.7'), { now: 0 })
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.decisions), [A.rule, A.outcome, A.degraded])).toEqual([
      'per-ip admitted true = 1',
      'per-ip denied true = 1',
    ])
  })

  it('counts rule updates, applied and refused by error type', async () => {
    const limiter = metered.limiter({ rules: RULES, logger: false })
    limiter.update!(RULES)
    expect(() => limiter.update!([{ ...RULES[0]!, id: '' }])).toThrow()
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.rulesUpdates), [A.updateOutcome, A.errorType])).toEqual([
      'applied - = 1', // no error type
      'refused ERR_RL_INVALID_RULE = 1',
    ])
  })

  it('counts clock steps back', async () => {
    let now = 50_000
    const limiter = metered.limiter({ rules: RULES, clock: { now: () => now }, logger: false })
    for (const at of [50_000, 49_000, 49_500, 10_000]) {
      now = at
      limiter.decide(get('a'))
    }
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.clockSteps), [A.clockDirection])).toEqual(['backward = 2'])
  })

  it('counts clock steps forward (ahead of the monotonic clock by a second or more), never idle time', async () => {
    const clocks = { wall: 1_000_000, monotonic: 0 }
    const limiter = metered.limiter({
      rules: RULES,
      clock: { now: () => clocks.wall },
      monotonic: { now: () => clocks.monotonic },
      logger: false,
    })
    // Idle for an hour, then busy, then NTP steps the clock 5 s ahead, then 999 ms (too small).
    for (const [idle, step] of [
      [3_600_000, 0],
      [10, 0],
      [10, 5_000],
      [10, 0],
      [2_000, 999],
      [2_000, 0],
    ] as const) {
      clocks.wall += idle + step
      clocks.monotonic += idle
      limiter.decide(get('a'))
    }
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.clockSteps), [A.clockDirection])).toEqual(['forward = 1'])
  })

  it('tells every step forward of at least the threshold, by how far, whatever the idle time around it', async () => {
    const op = fc.oneof(
      fc.record({ idle: fc.nat({ max: 5_000_000 }) }),
      fc.record({ step: fc.integer({ min: 250, max: 10_000_000 }) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const clocks = { wall: 1_000_000, monotonic: 7 }
        const steps: number[] = []
        const limiter = observedLimiter({
          rules: RULES,
          clock: { now: () => clocks.wall },
          monotonic: { now: () => clocks.monotonic },
          clockStepForwardMs: 250,
          logger: false,
          observers: [
            {
              events: ['clock.step'],
              observe: (event) => {
                if (event.type === 'clock.step') steps.push(event.ms)
              },
            },
          ],
        })
        limiter.decide(get('a'))
        const expected: number[] = []
        for (const o of ops) {
          if ('idle' in o) {
            clocks.wall += o.idle
            clocks.monotonic += o.idle
          } else {
            clocks.wall += o.step
            expected.push(o.step)
          }
          limiter.decide(get('a'))
        }
        expect(steps).toEqual(expected)
      }),
      { numRuns: 50 },
    )
  })

  it('refuses a bad clockStepForwardMs or monotonic clock at start-up, naming it', () => {
    expect(() => metered.limiter({ rules: RULES, clockStepForwardMs: 0 })).toThrow(
      /clockStepForwardMs: expected a whole number of ms ≥ 1, got 0/,
    )
    expect(() => metered.limiter({ rules: RULES, monotonic: {} as never })).toThrow(/monotonic:/)
  })

  it('never puts a client key or IP in an attribute, whatever the traffic', async () => {
    const identity = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ minLength: 1, maxLength: 12 }))
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(identity, fc.boolean()), { minLength: 1, maxLength: 30 }),
        async (trace) => {
          const local = meteredOnce()
          const limiter = local.limiter({ rules: RULES })
          for (const [ip, isLogin] of trace)
            limiter.decide(isLogin ? login(ip) : get(ip), { now: 0 })
          const metrics = await local.collect()
          await local.shutdown()
          const allowed = new Set(['per-ip', 'new-login', 'enforce', 'shadow', 'memory', 'consume'])
          for (const points of metrics.values()) {
            for (const point of points) {
              for (const [name, value] of Object.entries(point.attributes)) {
                // Outcomes, and the bucket bounds of histograms as Prometheus series: fixed sets.
                if (name === A.outcome || name === 'le') continue
                expect(allowed.has(String(value)), `${name}=${String(value)}`).toBe(true)
              }
            }
          }
        },
      ),
      { numRuns: 25 },
    )
  })

  it("keeps every value the SDK's histograms hold between collections, past the size of its arrays", async () => {
    const limiter = metered.limiter({
      rules: [
        { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
      ],
      metrics: { histograms: true },
    })
    for (let i = 0; i < 20_000; i++) limiter.decide(get(`10.0.${i >> 8}.${i & 255}`), { now: 0 })
    const first = await metered.collect()
    expect(first.get(I.remainingRatio)![0]!.value).toMatchObject({ count: 20_000 })
    limiter.decide(get('10.1.0.0'), { now: 0 })
    const second = await metered.collect()
    expect(second.get(I.remainingRatio)![0]!.value).toMatchObject({ count: 20_001 })
    expect(second.get(I.storeDuration)).toBeUndefined()
  })

  it('records nothing and costs no error without an SDK (the global no-op provider)', () => {
    const observer = tollgateMetrics()
    // It counts nothing, so the limiter builds no event and times no store call for it.
    expect(observer.events).toEqual([])
    const limiter = observedLimiter({ rules: RULES, observers: [observer] })
    expect(limiter.decide(get('a'), { now: 0 })).toMatchObject({ allowed: true })
  })
})

describe('shadowReportMetrics', () => {
  it("exports a shadow report's heaviest counts by rank and its error bound, never a key", async () => {
    const report = shadowReport({ capacity: 2 })
    shadowReportMetrics(report, { meterProvider: metered.meterProvider, ranks: 2 })
    const limiter = observedLimiter({ rules: RULES, observers: [report] })
    // The shadow rule allows one login a minute per IP: a is 3 over, b 1, c 2 (c replaces b).
    for (const [ip, times] of [
      ['10.0.0.1', 4],
      ['10.0.0.2', 2],
      ['10.0.0.3', 3],
    ] as const) {
      for (let i = 0; i < times; i++) limiter.decide(login(ip), { now: 0 })
    }
    const metrics = await metered.collect()
    expect(linesOf(metrics.get(I.shadowHeavyHitters), [A.rule, A.rank])).toEqual([
      'new-login 1 = 3',
      'new-login 2 = 3',
    ])
    expect(linesOf(metrics.get(I.shadowErrorBound), [A.rule])).toEqual(['new-login = 3'])
  })
})
