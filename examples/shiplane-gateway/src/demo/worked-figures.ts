import { type Algorithm, type AlgorithmState, type Decision, step } from '@tollgate/core/store'
import { fixedWindow, gcra, slidingLog, slidingWindow, tokenBucket } from '@tollgate/express'

/** A request at a time (ms), with a cost. */
type Arrival = { readonly at: number; readonly cost?: number }

/** Replays arrivals on one key and returns each decision. */
function replay(algorithm: Algorithm, arrivals: readonly Arrival[]): Decision[] {
  let state: AlgorithmState | undefined
  return arrivals.map(({ at, cost = 1 }) => {
    const result = step(algorithm, state, cost, at)
    state = result.state
    return result.decision
  })
}

const clock = (ms: number) => {
  const s = Math.floor(ms / 1000)
  const minutes = String(Math.floor(s / 60)).padStart(2, '0')
  const seconds = String(s % 60).padStart(2, '0')
  return `12:${minutes}:${seconds}${ms % 1000 ? `.${String(ms % 1000).padStart(3, '0')}` : ''}`
}
const count = (decisions: readonly Decision[]) => decisions.filter((d) => d.allowed).length
const times = (n: number, at: number): Arrival[] => Array.from({ length: n }, () => ({ at }))

function freePlanBurst(): string[] {
  const bucket = tokenBucket({ rate: 10, burst: 20 })
  const groups = [times(25, 0), times(8, 500), times(1, 2500)]
  const decisions = replay(bucket, groups.flat())
  const lines = ['Token bucket, Free plan (10 per second, burst 20)']
  let index = 0
  for (const group of groups) {
    const slice = decisions.slice(index, index + group.length)
    index += group.length
    const last = slice[slice.length - 1]!
    const denied = slice.find((d) => !d.allowed)
    lines.push(
      `  t=${(group[0]!.at / 1000).toFixed(1)}s  ${group.length} sent: ${count(slice)} allowed, ${slice.length - count(slice)} denied; remaining ${last.remaining}` +
        (denied ? `; Retry-After ${denied.retryAfterMs} ms` : ''),
    )
  }
  return lines
}

function minuteBoundary(): string[] {
  const arrivals = Array.from({ length: 200 }, (_, i) => ({ at: 50_000 + 100 * i }))
  const window = { limit: 100, windowMs: 60_000 }
  const rate = { rate: 100, periodMs: 60_000, burst: 100 }
  const lanes: Array<[string, Algorithm]> = [
    ['fixed window', fixedWindow(window)],
    ['sliding log', slidingLog(window)],
    ['sliding window counter', slidingWindow(window)],
    ['token bucket (burst 100)', tokenBucket(rate)],
    ['GCRA (burst 100)', gcra(rate)],
  ]
  return [
    'One burst across a minute boundary: 100 per 60 s, 10 requests/s from 12:00:50 to 12:01:10',
    ...lanes.map(
      ([name, algorithm]) =>
        `  ${name.padEnd(26)} admitted ${count(replay(algorithm, arrivals))} of 200`,
    ),
  ]
}

function slidingCounterDecision(): string[] {
  const counter = slidingWindow({ limit: 100, windowMs: 60_000 })
  const { decision } = step(counter, [60_000, 80, 30], 1, 80_000)
  return [
    'Sliding window counter at 12:01:20: previous window 80, current 30',
    `  ${decision.allowed ? 'allowed' : 'denied'}, ${decision.remaining} left`,
  ]
}

function gcraBurst(): string[] {
  const decisions = replay(gcra({ rate: 10, burst: 20 }), times(21, 0))
  const last = decisions[20]!
  return [
    'GCRA, Free plan: 21 requests at t=0 on a fresh key',
    `  ${count(decisions)} allowed; the 21st ${last.allowed ? 'allowed' : `denied, retry in ${last.retryAfterMs} ms`}`,
  ]
}

function loginLog(): string[] {
  const log = slidingLog({ limit: 5, windowMs: 60_000 })
  const attempts = [1000, 2000, 3000, 4000, 5000, 6000, 30_000, 60_500, 61_000]
  const decisions = replay(
    log,
    attempts.map((at) => ({ at })),
  )
  return [
    'Sliding log, login-per-ip (5 per 60 s)',
    ...attempts.map((at, i) => {
      const d = decisions[i]!
      return `  ${clock(at)}  ${d.allowed ? `allowed, ${d.remaining} left` : `denied, retry in ${d.retryAfterMs} ms`}`
    }),
  ]
}

/** The specification's worked scenarios, computed by the real algorithms. */
export function workedFigures(): string[] {
  return [
    ...freePlanBurst(),
    '',
    ...minuteBoundary(),
    '',
    ...slidingCounterDecision(),
    '',
    ...gcraBurst(),
    '',
    ...loginLog(),
  ]
}
