// Histograms aggregated in process ('buckets') against the SDK's own, on the same traffic.
import { memoryStore, type RuleConfig, type Store } from '@tollgate/core'
import { linesOf, type Point } from '@tollgate/test-utils/metrics'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ATTRIBUTES as A, INSTRUMENTS as I } from './names.js'
import { meteredOnce } from './test-metrics.js'

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 3, burst: 7 },
  { id: 'per-key', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 4, window: '1s' },
]

/** A store of the app's own that answers synchronously: its calls are timed (the memory store's are not). */
function syncStore(): Store {
  const inner = memoryStore()
  return {
    consume: (charges, now) => inner.consume(charges, now),
    refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
  }
}

/** The buckets-mode series of `name` as the SDK's histogram points would give them. */
function asHistogram(metrics: Map<string, Point[]>, name: string, keys: readonly string[]) {
  const key = (p: Point) => keys.map((k) => String(p.attributes[k])).join(' ')
  return (metrics.get(`${name}.count`) ?? []).map((countPoint) => {
    const cumulative = (metrics.get(`${name}.bucket`) ?? [])
      .filter((p) => key(p) === key(countPoint))
      .map((p) => {
        const { le } = p.attributes as { le?: string }
        return [le === '+Inf' ? Infinity : Number(le), p.value as number]
      })
      .sort((a, b) => a[0]! - b[0]!)
      .map(([, value]) => value!)
    const sum = metrics.get(`${name}.sum`)!.find((p) => key(p) === key(countPoint))!.value
    return {
      series: key(countPoint),
      count: countPoint.value,
      sum,
      buckets: cumulative.map((value, i) => value - (i === 0 ? 0 : cumulative[i - 1]!)),
    }
  })
}

const fromSdk = (points: Point[] | undefined, keys: readonly string[]) =>
  (points ?? []).map((p) => ({
    series: keys.map((k) => String(p.attributes[k])).join(' '),
    count: (p.value as { count: number }).count,
    sum: (p.value as { sum: number }).sum,
    buckets: p.buckets,
  }))

const bySeries = <T extends { series: string }>(list: T[]) =>
  [...list].sort((a, b) => a.series.localeCompare(b.series))

describe("histograms: 'buckets'", () => {
  it('keeps the same buckets, count and sum as the SDK histogram, for any traffic', async () => {
    const request = fc.record({ ip: fc.constantFrom('a', 'b', 'c'), gap: fc.nat({ max: 700 }) })
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 60 }), async (trace) => {
        const sdk = meteredOnce()
        const buckets = meteredOnce()
        let now = 0
        // Each limiter's monotonic clock reads the same sequence: calls of 0.04 ms to 0.4 s.
        const ticking = () => {
          let reads = 0
          return { now: () => (reads++) ** 3 * 0.04 }
        }
        const a = sdk.limiter({
          rules: RULES,
          store: syncStore(),
          monotonic: ticking(),
          metrics: { histograms: true },
        })
        const b = buckets.limiter({
          store: syncStore(),
          rules: RULES,
          monotonic: ticking(),
          metrics: { histograms: 'buckets' },
        })
        for (const { ip, gap } of trace) {
          now += gap
          const facts = { method: 'GET', path: '/', identities: { ip } }
          a.decide(facts, { now })
          b.decide(facts, { now })
        }
        const [left, right] = [await sdk.collect(), await buckets.collect()]
        await Promise.all([sdk.shutdown(), buckets.shutdown()])
        const ratioKeys = [A.rule, A.mode]
        expect(bySeries(asHistogram(right, I.remainingRatio, ratioKeys))).toEqual(
          bySeries(fromSdk(left.get(I.remainingRatio), ratioKeys)),
        )
        const storeKeys = [A.storeKind, A.storeOperation]
        expect(bySeries(asHistogram(right, I.storeDuration, storeKeys))).toEqual(
          bySeries(fromSdk(left.get(I.storeDuration), storeKeys)),
        )
        // The counters are the same whichever way histograms go.
        expect(linesOf(right.get(I.decisions), [A.rule, A.outcome])).toEqual(
          linesOf(left.get(I.decisions), [A.rule, A.outcome]),
        )
      }),
      { numRuns: 20 },
    )
  })

  it('refuses any other histograms option, naming it', () => {
    const metered = meteredOnce()
    expect(() =>
      metered.limiter({ rules: RULES, metrics: { histograms: 'sdk' as never } }),
    ).toThrow(/histograms: expected true, false or 'buckets', got sdk/)
    return metered.shutdown()
  })
})
