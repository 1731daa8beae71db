/**
 * CPU per request of a concurrency rule (take a slot, then give it back) against an admitted
 * token-bucket request, both on the memory store through `limiter.decide`, one rule each, one
 * hot key. The two run interleaved, round after round, so that load from other processes falls
 * on both alike; each figure is process CPU time (user + system) per request.
 *   pnpm --filter @tollgate/benchmarks bench:concurrency -- --rounds=9 --requests=200000
 * (run.ts runs this part unless given `--redis`)
 * (on the built packages, as an app runs them: the sources under tsx carry helpers of its own)
 */
import { createLimiter, type Limiter, type RuleConfig, type Verdict } from '@tollgate/core'

const args = new Map(
  process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]),
)
const ROUNDS = Number(args.get('rounds') ?? 7)
const REQUESTS = Number(args.get('requests') ?? 200_000)
const facts = { method: 'GET', path: '/reports/1', identities: { ip: '203.0.113.7' } }

function limiterOf(rule: RuleConfig): Limiter {
  return createLimiter({ rules: [rule], logger: false })
}

const bucket = limiterOf({
  id: 'tb',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1_000_000_000,
  burst: 1_000_000_000,
})
const slots = limiterOf({ id: 'c', match: {}, algorithm: 'concurrency', limit: 1000 })

function tokenBucket(): void {
  const verdict = bucket.decide(facts) as Verdict
  if (!verdict.allowed) throw new Error('denied')
}

function takeAndRelease(): void {
  const verdict = slots.decide(facts) as Verdict
  if (!verdict.allowed) throw new Error('denied')
  slots.release!(verdict)
}

/** CPU ns per call of `run`, over `REQUESTS` calls. */
function cpuPerCall(run: () => void): number {
  const start = process.cpuUsage()
  for (let i = 0; i < REQUESTS; i++) run()
  const used = process.cpuUsage(start)
  return ((used.user + used.system) * 1000) / REQUESTS
}

// Warm up both paths past the JIT's tiers.
cpuPerCall(tokenBucket)
cpuPerCall(takeAndRelease)
const rows: Array<{ bucket: number; slots: number }> = []
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0
  const first = cpuPerCall(order ? tokenBucket : takeAndRelease)
  const second = cpuPerCall(order ? takeAndRelease : tokenBucket)
  rows.push(order ? { bucket: first, slots: second } : { bucket: second, slots: first })
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ratios = rows.map((row) => row.slots / row.bucket)
const show = (ns: number) => `${(ns / 1000).toFixed(3)} µs`
console.log(`${ROUNDS} rounds of ${REQUESTS} requests each, interleaved`)
console.log(`token bucket, admitted:     median ${show(median(rows.map((r) => r.bucket)))}`)
console.log(`concurrency take + release: median ${show(median(rows.map((r) => r.slots)))}`)
console.log(
  `ratio: median ${median(ratios).toFixed(2)}×, rounds from ${Math.min(...ratios).toFixed(2)}× to ${Math.max(...ratios).toFixed(2)}×`,
)
