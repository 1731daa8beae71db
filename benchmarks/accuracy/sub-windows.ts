// How far sub-window counters stray from the exact sliding log: the spec's minute-boundary burst
// and random traffic, for 2, 6 and 60 buckets (and the two-counter sliding window beside them).
// Pure arithmetic on an injected clock: the figures are the same on any machine.
// Run: pnpm --filter @tollgate/benchmarks bench:accuracy
import { slidingLog, slidingWindow } from '@tollgate/core'
import { type Algorithm, step } from '@tollgate/core/store'

const LIMIT = 100
const WINDOW_MS = 60_000

/** Admits `arrivals` (times in ms, in order) one unit each; returns the admitted times. */
function admitted(algorithm: Algorithm, arrivals: readonly number[]): number[] {
  let state: readonly number[] | undefined
  const passed: number[] = []
  for (const at of arrivals) {
    const result = step(algorithm, state, 1, at)
    state = result.state
    if (result.decision.allowed) passed.push(at)
  }
  return passed
}

/** The most admitted in any window of WINDOW_MS (a rolling count over the admitted times). */
function worstWindow(times: readonly number[]): number {
  let worst = 0
  let first = 0
  for (let last = 0; last < times.length; last++) {
    while (times[first]! <= times[last]! - WINDOW_MS) first++
    worst = Math.max(worst, last - first + 1)
  }
  return worst
}

/** A small deterministic generator (mulberry32), so that every run measures the same traffic. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/**
 * Random traffic: an hour of arrivals at twice the limit on average, in bursts: quiet and busy
 * spells of random length, arrivals exponential within them.
 */
function randomTraffic(seed: number): number[] {
  const next = random(seed)
  const arrivals: number[] = []
  let now = 1_800_000_000_000
  const end = now + 3_600_000
  while (now < end) {
    const busy = next() < 0.5
    const spell = 1000 + Math.floor(next() * 30_000)
    const meanGap = busy ? 100 : 1500
    const until = now + spell
    while (now < until) {
      now += Math.max(1, Math.round(-Math.log(1 - next()) * meanGap))
      arrivals.push(now)
    }
  }
  return arrivals
}

// 10 requests a second from 12:00:50 to 12:01:10 (t = 0 is 12:00:00 of some day).
const noon = 1_800_000_000_000 - (1_800_000_000_000 % 86_400_000) + 12 * 3_600_000
const burst = Array.from({ length: 200 }, (_, i) => noon + 50_000 + i * 100)

const algorithms: [string, Algorithm][] = [
  ['sliding log (exact)', slidingLog({ limit: LIMIT, windowMs: WINDOW_MS })],
  ['two counters', slidingWindow({ limit: LIMIT, windowMs: WINDOW_MS })],
  ...[2, 6, 60].map((k): [string, Algorithm] => [
    `buckets: ${k}`,
    slidingWindow({ limit: LIMIT, windowMs: WINDOW_MS, buckets: k }),
  ]),
]

const traffic = [1, 2, 3, 4, 5, 6, 7, 8].map(randomTraffic)
const exactTotal = traffic.reduce((sum, t) => sum + admitted(algorithms[0]![1], t).length, 0)

console.log(`limit ${LIMIT} per ${WINDOW_MS / 1000} s`)
console.log(
  '| counting | burst: admitted in the 60 s to 12:01:10 | random: worst 60 s (limit 100) | random: admitted vs the log |',
)
console.log('|---|---|---|---|')
for (const [name, algorithm] of algorithms) {
  const inBurst = admitted(algorithm, burst).filter((t) => t > noon + 10_000 && t <= noon + 70_000)
  const worst = Math.max(...traffic.map((t) => worstWindow(admitted(algorithm, t))))
  const total = traffic.reduce((sum, t) => sum + admitted(algorithm, t).length, 0)
  const excess = ((total / exactTotal - 1) * 100).toFixed(2)
  console.log(`| ${name} | ${inBurst.length} | ${worst} | ${total} (${excess}%) |`)
}
