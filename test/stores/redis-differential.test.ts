// Random traces through the reference store and the Redis store, with injected time: every
// decision must be identical, for every algorithm, multi-rule and shadow charges, and refunds.
import { fixedWindow } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { redisOfTheFile, redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, nodeRedisTarget, type Target } from './support/targets.js'
import {
  AWKWARD_KEYS,
  algorithmArb,
  calendarBoundaryArbs,
  concurrencyArbs,
  expectSameAsReference,
  extremeTraceArb,
  longLogArbs,
  traceArb,
  wideRequestTraceArb,
} from './support/trace.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 60_000 })

// Both layouts: a key per rule, and one value per identity (on one client: the layout is the
// scripts', not the client's).
const clients = [
  ['ioredis', 'rule', ioredisTarget],
  ['node-redis', 'rule', nodeRedisTarget],
  ['ioredis', 'identity', ioredisTarget],
] as const

// Thousands of rule sets, each with scripts of its own: on a Redis of the file's own.
const redisUrl = redisOfTheFile()

describe.skipIf(!redisServerBinary).each(clients)(
  'Redis store (single node, %s, layout %s) vs the reference store',
  (_name, layout, connect) => {
    let target: Target
    beforeAll(async () => {
      target = await connect(redisUrl())
    })
    afterAll(async () => {
      await target?.close()
    })

    // Nothing may expire on the server's clock while a trace runs on its own clock; and a
    // shared, loaded Redis may take longer than the default 250 ms budget to answer a call.
    const store = () =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('diff'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
        layout,
      })

    it('decides every trace exactly as the reference store (two keys)', async () => {
      await fc.assert(
        fc.asyncProperty(traceArb(['ip:203.0.113.7', 'api_key:k_1']), (trace) =>
          expectSameAsReference(store(), trace),
        ),
        { numRuns: 150 },
      )
    })

    it('decides requests of eight rules, the widest rule-set script, exactly as the reference store', async () => {
      await fc.assert(
        fc.asyncProperty(wideRequestTraceArb('ip:203.0.113.7', 8), (trace) =>
          expectSameAsReference(store(), trace),
        ),
        { numRuns: 40 },
      )
    })

    it('decides traces whose clock steps back and forward exactly as the reference store', async () => {
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7', 'api_key:k_1'], 30, { clockSteps: true }),
          (trace) => expectSameAsReference(store(), trace),
        ),
        { numRuns: 150 },
      )
    })

    it('decides every trace exactly as the reference store (awkward keys)', async () => {
      await fc.assert(
        fc.asyncProperty(traceArb(AWKWARD_KEYS, 20), (trace) =>
          expectSameAsReference(store(), trace),
        ),
        { numRuns: 60 },
      )
    })

    // A state the clock stepped back from by more than its reset span is moved to now. An
    // inspection (cost 0) reads it moved and writes nothing, in every form: a long sliding log
    // kept as a list is not moved in place either, so that a later request finds it where the
    // reference store leaves it.
    it('leaves a state the clock stepped back from unwritten when it is only inspected', async () => {
      const traces = fc.oneof(algorithmArb, longLogArbs.algorithms).chain((algorithm) => {
        const charges = (cost: number): Charge[] => [
          { rule: 'stepped', algorithm, key: 'ip:203.0.113.7', cost, shadow: false },
        ]
        return fc
          .record({
            cost: fc.integer({ min: 1, max: algorithm.limit }),
            back: fc.integer({ min: 1, max: 20_000 }),
            gaps: fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 3 }),
            lastGap: fc.integer({ min: 0, max: 3000 }),
            lastCost: fc.integer({ min: 0, max: algorithm.limit }),
          })
          .map(({ cost, back, gaps, lastGap, lastCost }) => ({
            start: 1_700_000_000_000,
            steps: [
              { kind: 'consume' as const, dt: 0, charges: charges(cost) },
              ...gaps.map((dt, i) => ({
                kind: 'consume' as const,
                dt: i === 0 ? -back : dt,
                charges: charges(0),
              })),
              { kind: 'consume' as const, dt: lastGap, charges: charges(lastCost) },
            ],
          }))
      })
      await fc.assert(
        fc.asyncProperty(traces, (trace) => expectSameAsReference(store(), trace)),
        { numRuns: 150 },
      )
    })

    it('decides long sliding logs exactly as the reference store, packed and as lists', async () => {
      await fc.assert(
        fc.asyncProperty(traceArb(['ip:203.0.113.7', 'ip:203.0.113.8'], 30, longLogArbs), (trace) =>
          expectSameAsReference(store(), trace),
        ),
        { numRuns: 100 },
      )
    })

    it('moves long sliding logs, packed and as lists, as the reference store when the clock steps', async () => {
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7'], 30, { ...longLogArbs, clockSteps: true }),
          (trace) => expectSameAsReference(store(), trace),
        ),
        { numRuns: 60 },
      )
    })

    it('decides calendar windows across their boundaries, in UTC and in time zones, exactly as the reference store', async () => {
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7', 'api_key:k_1'], 30, {
            ...calendarBoundaryArbs,
            nearBoundaries: true,
          }),
          (trace) => expectSameAsReference(store(), trace),
        ),
        { numRuns: 80 },
      )
    })

    it('decides calendar windows across boundaries on a clock that steps, exactly as the reference store', async () => {
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7'], 30, {
            ...calendarBoundaryArbs,
            nearBoundaries: true,
            clockSteps: true,
          }),
          (trace) => expectSameAsReference(store(), trace),
        ),
        { numRuns: 60 },
      )
    })

    // A refund made after its calendar window ended, then a step back into that window: the
    // ended window's state is dropped by the refund, as the reference store drops it, and is
    // not kept until an end the script once took for the next window's.
    it('drops a calendar window that ended before a refund, as the reference store does', async () => {
      const week = fixedWindow({ limit: 6, calendar: 'week' })
      const boundary = Date.UTC(2029, 3, 23) // a Monday, 00:00 UTC
      const charges = (cost: number): Charge[] => [
        { rule: 'weekly', algorithm: week, key: 'ip:203.0.113.7', cost, shadow: false },
      ]
      await expectSameAsReference(store(), {
        start: boundary - 789,
        steps: [
          { kind: 'consume', dt: 0, charges: charges(4) },
          { kind: 'consume', dt: 0, charges: charges(1) },
          { kind: 'refund', dt: 1332, of: 1 },
          { kind: 'consume', dt: -4246, charges: charges(1) },
          { kind: 'consume', dt: 162, charges: charges(1) },
        ],
      })
    })

    // Leases outlast every trace (its clock runs at most a few minutes), as the reference
    // store's slots never end: only releases give them back.
    it('decides concurrency slots, beside other rules and released once, exactly as the reference store', async () => {
      const leased = () =>
        redisStore({
          client: target.client,
          time: 'caller',
          prefix: uniquePrefix('diff-slots'),
          expiryMarginMs: 600_000,
          timeoutMs: 10_000,
          leaseMs: 86_400_000,
          layout,
        })
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7', 'api_key:k_1'], 30, concurrencyArbs),
          (trace) => expectSameAsReference(leased(), trace, { releases: true }),
        ),
        { numRuns: 100 },
      )
    })

    // A rule that declares a version keeps it, and its figures, beside each state, and takes the
    // general scripts: every algorithm and request decides as the reference store does.
    it('decides rules that declare a version exactly as the reference store, clock steps included', async () => {
      const versioned = algorithmArb.map((algorithm) => ({
        ...algorithm,
        versioned: { version: 7, onChange: undefined },
      }))
      await fc.assert(
        fc.asyncProperty(
          traceArb(['ip:203.0.113.7', 'api_key:k_1'], 30, {
            algorithms: fc.oneof(versioned, algorithmArb),
            clockSteps: true,
          }),
          (trace) => expectSameAsReference(store(), trace),
        ),
        { numRuns: 150 },
      )
    })

    it('agrees near 2^53: huge capacities, odd periods, times close to the largest allowed', async () => {
      await fc.assert(
        fc.asyncProperty(extremeTraceArb(), (trace) => expectSameAsReference(store(), trace)),
        { numRuns: 100 },
      )
    })
  },
)
