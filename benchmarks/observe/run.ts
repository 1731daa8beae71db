/**
 * The admitted path with and without metrics, in process: `limiter.decide` of one rule, always
 * admitted (a burst no run exhausts), for
 *
 * - today: the plain limiter of another checkout's built core (`--today=<its dist/index.js>`),
 * - off: the plain limiter of this tree (`createLimiter`, which carries no observation code),
 * - no SDK: `observedLimiter` with `tollgateMetrics()` on OpenTelemetry's global no-op provider,
 * - SDK: the same with the OpenTelemetry SDK recording (a reader that never exports), with
 *   counters only (`histograms: false`), with the default (histograms aggregated in process,
 *   `'buckets'`), and with the SDK's histograms (`histograms: true`),
 *
 * on the memory store (whose calls are not timed), and then off and the default on a
 * synchronous store of the app's own (whose calls are: two monotonic clock reads each).
 *
 * Each round runs every variant once, in a rotating order, so that load on a shared machine
 * falls on all of them alike; the figure is the median of the rounds, and the spread is the
 * median's distance to the fastest and slowest round. Each variant is compared with the plain
 * limiter on its own store.
 * Run: pnpm --filter @tollgate/benchmarks bench:observe [-- --rounds=15 --ops=200000 --write]
 */
import { cpus, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import {
  createLimiter,
  type Limiter,
  memoryStore,
  type RuleConfig,
  type Store,
} from '@tollgate/core'
import { observedLimiter } from '@tollgate/core/observe'
import { tollgateMetrics } from '@tollgate/opentelemetry'
import { replaceDocSection } from '../doc-section.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? 'true'] as const
  }),
)
const ROUNDS = Number(args.get('rounds') ?? 15)
const OPS = Number(args.get('ops') ?? 200_000)
const TODAY = args.get('today')

const RULES: RuleConfig[] = [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1_000_000,
    burst: 1_000_000_000,
  },
]
const FACTS = { method: 'GET', path: '/v1/labels', identities: { ip: '203.0.113.7' } }

/** A reader that only collects when asked: the SDK records, nothing is exported. */
class QuietReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** The memory store seen through the `Store` interface only: a store of the app's own. */
function ownStore(): Store {
  const inner = memoryStore()
  return {
    consume: (charges, now) => inner.consume(charges, now),
    refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
  }
}

/** A variant: its name, its limiter, and the name of the plain limiter it is compared with. */
type Variant = readonly [name: string, limiter: Limiter, base: string]

const OFF = 'off (createLimiter)'
const OWN_OFF = 'off, a store of your own'

async function variants(): Promise<Variant[]> {
  const list: Variant[] = []
  if (TODAY !== undefined) {
    const today = (await import(TODAY)) as { createLimiter: typeof createLimiter }
    list.push(['today (main)', today.createLimiter({ rules: RULES }), OFF])
  }
  list.push([OFF, createLimiter({ rules: RULES }), OFF])
  list.push([
    'no SDK (no-op API)',
    observedLimiter({ rules: RULES, observers: [tollgateMetrics()] }),
    OFF,
  ])
  const meterProvider = new MeterProvider({ readers: [new QuietReader()] })
  const metered = (histograms?: boolean, store?: Store) =>
    observedLimiter({
      rules: RULES,
      ...(store === undefined ? {} : { store }),
      observers: [
        tollgateMetrics(
          histograms === undefined ? { meterProvider } : { meterProvider, histograms },
        ),
      ],
    })
  list.push(['SDK, counters only', metered(false), OFF])
  list.push(["SDK, default ('buckets')", metered(), OFF])
  list.push(["SDK, the SDK's histograms", metered(true), OFF])
  list.push([OWN_OFF, createLimiter({ rules: RULES, store: ownStore() }), OWN_OFF])
  list.push(['SDK, default, a store of your own (timed)', metered(undefined, ownStore()), OWN_OFF])
  return list
}

function nsPerOp(limiter: Limiter, at: number): number {
  const start = performance.now()
  for (let i = 0; i < OPS; i++) limiter.decide(FACTS, { now: at })
  return ((performance.now() - start) * 1e6) / OPS
}

const list = await variants()
for (const [, limiter] of list) nsPerOp(limiter, 1) // warm up every path before measuring
const times = list.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < list.length; k++) {
    const i = (round + k) % list.length
    times[i]!.push(nsPerOp(list[i]![1], 2 + round))
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
const timesOf = (name: string) => times[list.findIndex(([named]) => named === name)]!
const rows = list.map(([name, , base], i) => {
  const m = median(times[i]!)
  const low = Math.min(...times[i]!)
  const high = Math.max(...times[i]!)
  const off = median(timesOf(base))
  const offLow = Math.min(...timesOf(base))
  return `| ${name} | ${m.toFixed(0)} | −${(((m - low) / m) * 100).toFixed(0)} % / +${(((high - m) / m) * 100).toFixed(0)} % | ${(m / off).toFixed(2)} | ${(m - off).toFixed(0)} | ${low.toFixed(0)} | ${(low - offLow).toFixed(0)} |`
})
const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(', ')
const section = `## Metrics on the admitted path

\`limiter.decide\` of one token-bucket rule, always admitted, in process: the plain limiter
(what an app without observers runs), \`observedLimiter\` with \`tollgateMetrics()\` and no SDK
(OpenTelemetry's no-op API), and with the SDK recording (a reader that never exports; without
the collections a real reader makes, the values the SDK's histograms hold are handed to the SDK
whenever 16 K have gathered, so their cost is all counted here). On the memory store, whose
calls are not timed, then on a synchronous store of your own, whose calls are (each variant is
compared with the plain limiter on its own store). ${OPS.toLocaleString('en')} decisions per
variant per round, ${ROUNDS} rounds in rotating order; the median round, with the spread of the
rounds around it.

| variant | ns per decision (median) | rounds vs median | × its off | ns over its off | best round | best over its off's best |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Command: \`pnpm --filter @tollgate/benchmarks bench:observe -- --rounds=${ROUNDS} --ops=${OPS}${TODAY === undefined ? '' : ' --today=<main>/packages/core/dist/index.js'} --write\`
(${cpus().length} cores shared with other work, load average ${load} at the end;
Node ${process.version}).
`
console.log(section)
if (args.has('write')) await replaceDocSection('Metrics on the admitted path', section)
