/**
 * CPU per queued request: `count` requests join a queue at once and are released over about a
 * second, with the runtime's own timers; the CPU time (user + system) from the first enqueue to
 * the last release, divided by `count`. Beside them, what an admitted request costs Tollgate (a
 * decision that waits for nothing). Peers: rate-limiter-flexible's RateLimiterQueue (over its
 * memory limiter), p-throttle and bottleneck, each set to release the same count in about the
 * same second. `pnpm --filter @tollgate/benchmarks bench:queue [-- --runs=3]` (run.ts runs this
 * part unless given `--memory`)
 */
import { createLimiter, type Verdict } from '@tollgate/core'
import Bottleneck from 'bottleneck'
import pThrottle from 'p-throttle'
import { RateLimiterMemory, RateLimiterQueue } from 'rate-limiter-flexible'

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1]
const COUNTS = (option('counts') ?? '1000,10000,100000').split(',').map(Number)
const runs = Number(option('runs') ?? 3)
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

/** `upTo`: the largest count it is run at (bottleneck's ~0.7 ms per request would take minutes). */
type Contender = { name: string; upTo?: number; run(count: number): Promise<void> }

const all: Contender[] = [
  {
    name: 'tollgate leaky_queue',
    async run(count) {
      const limiter = createLimiter({
        rules: [
          {
            id: 'q',
            match: { identity: 'ip' },
            algorithm: 'leaky_queue',
            rate: count,
            burst: count,
          },
        ],
      })
      const waiting: Promise<Verdict>[] = []
      for (let i = 0; i < count; i++) waiting.push(limiter.hold(limiter.decide(facts) as Verdict))
      await Promise.all(waiting)
    },
  },
  {
    name: 'rate-limiter-flexible RateLimiterQueue',
    async run(count) {
      // Half pass at once, the other half when the next one-second window opens.
      const queue = new RateLimiterQueue(
        new RateLimiterMemory({ points: count / 2, duration: 1 }),
        {
          maxQueueSize: count,
        },
      )
      const waiting: Promise<unknown>[] = []
      for (let i = 0; i < count; i++) waiting.push(queue.removeTokens(1))
      await Promise.all(waiting)
    },
  },
  {
    name: 'p-throttle',
    async run(count) {
      const throttled = pThrottle({ limit: count / 10, interval: 100 })(() => undefined)
      const waiting: Promise<unknown>[] = []
      for (let i = 0; i < count; i++) waiting.push(Promise.resolve(throttled()))
      await Promise.all(waiting)
    },
  },
  {
    name: 'bottleneck',
    upTo: 10_000,
    async run(count) {
      const limiter = new Bottleneck({
        reservoir: count / 10,
        reservoirRefreshAmount: count / 10,
        reservoirRefreshInterval: 100,
      })
      const waiting: Promise<unknown>[] = []
      for (let i = 0; i < count; i++) waiting.push(limiter.schedule(async () => null))
      await Promise.all(waiting)
      await limiter.disconnect()
    },
  },
]

const contenders = all.filter(
  (c) => option('only') === undefined || c.name.includes(option('only')!),
)

/** An admitted request: one decision of a rule whose limit is never reached. */
function admittedMicros(count: number): number {
  const limiter = createLimiter({
    rules: [{ id: 'b', match: { identity: 'ip' }, algorithm: 'gcra', rate: 1, burst: count + 1 }],
  })
  const start = process.cpuUsage()
  for (let i = 0; i < count; i++) limiter.decide(facts)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / count
}

async function micros(contender: Contender, count: number): Promise<number> {
  gc()
  const start = process.cpuUsage()
  await contender.run(count)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / count
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rows: string[] = []
for (const count of COUNTS) {
  const figures = new Map<string, number[]>()
  for (let run = 0; run < runs; run++) {
    // Every contender once per run, in rotating order.
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[(i + run) % contenders.length]!
      if (count > (contender.upTo ?? count)) continue
      const list = figures.get(contender.name) ?? []
      list.push(await micros(contender, count))
      figures.set(contender.name, list)
    }
    const list = figures.get('tollgate admitted (gcra, no wait)') ?? []
    list.push(admittedMicros(count))
    figures.set('tollgate admitted (gcra, no wait)', list)
  }
  const ours = median(figures.get('tollgate leaky_queue') ?? [1])
  for (const [name, list] of figures) {
    const mid = median(list)
    const spread = `${Math.min(...list).toFixed(2)}–${Math.max(...list).toFixed(2)}`
    rows.push(
      `| ${count.toLocaleString('en')} | ${name} | ${mid.toFixed(2)} | ${spread} | ${(mid / ours).toFixed(2)} |`,
    )
  }
}
console.log(
  '| waiting at once | contender | µs CPU per request (median) | range over runs | × tollgate queue |',
)
console.log('| --- | --- | --- | --- | --- |')
for (const row of rows) console.log(row)
