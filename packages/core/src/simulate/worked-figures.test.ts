// The specification's worked figures, replayed by the simulator through the real limiter and
// memory store (the algorithms alone are checked against them in algorithms/worked-figures).
import { describe, expect, it } from 'vitest'
import {
  admittedBetween,
  type Simulation,
  scenarioNamed,
  simulate,
  simulateLanes,
} from './index.js'

function run(name: string): Simulation[] {
  const scenario = scenarioNamed(name)!
  return simulateLanes(scenario.lanes, scenario.arrivals, scenario)
}

/** The state read at `at` (before that moment's arrivals), or the last one left at `at`. */
function stateAt(simulation: Simulation, at: number, phase: 'read' | 'request' = 'read') {
  const found = simulation.states.filter((s) => s.at === at && s.phase === phase)
  return phase === 'read' ? found[0] : found[found.length - 1]
}

describe('watching them decide: token bucket, Free plan (R 10/s, B 20)', () => {
  const [bucket] = run('free-plan-burst') as [Simulation]
  const allowedAt = (at: number) => bucket.requests.filter((r) => r.at === at && r.allowed).length
  const deniedAt = (at: number) => bucket.requests.filter((r) => r.at === at && !r.allowed).length

  it('25 at 0 s: 20 allowed, 5 denied with 429s; 8 at 0.5 s: 5 allowed, 3 denied; 1 at 2.5 s: allowed, 19 left', () => {
    expect([allowedAt(0), deniedAt(0)]).toEqual([20, 5])
    expect(bucket.requests.slice(0, 20).every((r) => r.allowed)).toBe(true)
    expect([allowedAt(500), deniedAt(500)]).toEqual([5, 3])
    expect([allowedAt(2500), deniedAt(2500)]).toEqual([1, 0])
    expect(bucket.requests[33]!.decisions[0]).toMatchObject({ allowed: true, remaining: 19 })
    expect(bucket.requests[20]!.reason).toBe('limit')
  })

  it("draws the figure's data: tokens 20, 0, 5, 0, 20, 19, 20, 20 at 0, 0.02, 0.5, 0.52, 2.5, 2.52, 2.62, 3 s", () => {
    const tokens = (at: number, phase?: 'read' | 'request') => stateAt(bucket, at, phase)?.remaining
    expect(tokens(0)).toBe(20)
    expect(tokens(0, 'request')).toBe(0)
    expect(tokens(20)).toBe(0)
    expect(tokens(500)).toBe(5)
    expect(tokens(500, 'request')).toBe(0)
    expect(tokens(520)).toBe(0)
    // The idle 2 s refill 2 × 10 = 20 = B: full again exactly when the last request arrives.
    expect(tokens(2490)).toBe(19)
    expect(tokens(2500)).toBe(20)
    expect(tokens(2500, 'request')).toBe(19)
    expect(tokens(2520)).toBe(19)
    expect(tokens(2600)).toBe(20)
    expect(tokens(2620)).toBe(20)
    expect(tokens(3000)).toBe(20)
    expect(Math.max(...bucket.states.map((s) => s.remaining))).toBe(20)
  })
})

describe('one burst across a minute boundary (100 per minute, 10/s from 12:00:50 to 12:01:10)', () => {
  const lanes = run('minute-boundary')
  const firstHalf = lanes.map((lane) => admittedBetween(lane, 50_000, 60_000))
  const secondHalf = lanes.map((lane) => admittedBetween(lane, 60_000, 70_000))

  it('admits 200 / 100 / 116 / 133 (fixed window, sliding log, sliding counter, token bucket)', () => {
    expect(lanes.map((lane) => admittedBetween(lane, 10_000, 70_000))).toEqual([200, 100, 116, 133])
  })

  it('100 + 100, 100 + 0, 100 + 16, 100 + 33 on each side of 12:01:00', () => {
    expect(firstHalf).toEqual([100, 100, 100, 100])
    expect(secondHalf).toEqual([100, 0, 16, 33])
  })

  it('the token bucket has 16.7 tokens left at 12:01:00, and the fixed window resets there', () => {
    const [fixed, , , bucket] = lanes as [Simulation, Simulation, Simulation, Simulation]
    expect(stateAt(bucket, 60_000)!.remaining).toBe(16)
    expect(stateAt(fixed, 59_900, 'request')!.used).toBe(100)
    expect(stateAt(fixed, 60_000)!.used).toBe(0)
  })

  it('the sliding log holds all 100 timestamps until 12:01:50', () => {
    const log = lanes[1]!
    expect(stateAt(log, 70_000)!.used).toBe(100)
    expect(stateAt(log, 80_000)!.used).toBe(100)
  })
})

describe('a sliding counter decision: previous window 80, current 30, at 12:01:20', () => {
  const [counter] = run('sliding-counter') as [Simulation]
  const last = counter.requests[counter.requests.length - 1]!

  it('estimates 80 × 0.667 + 30 = 83.3, and 83.3 + 1 ≤ 100 is allowed with floor(100 − 84.3) = 15 left', () => {
    expect(counter.requests.every((r) => r.allowed)).toBe(true)
    expect(stateAt(counter, 80_000)!.remaining).toBe(16) // floor(100 − 83.3)
    expect(last.at).toBe(80_000)
    expect(last.decisions[0]).toMatchObject({ allowed: true, remaining: 15, limit: 100 })
  })
})

describe('GCRA, Free plan: T = 100 ms, τ = 1.9 s, 21 requests at t = 0 on a fresh key', () => {
  const [gcra] = run('gcra-21') as [Simulation]
  // TAT after a request is now + resetAfterMs (now is 0).
  const tatAfter = gcra.requests.map((r) => r.at + r.decisions[0]!.resetAfterMs)

  it('request n moves TAT to n × 100 ms while TAT − now ≤ 1.9 s; the 21st is denied, retry in 0.1 s, TAT unchanged', () => {
    expect(tatAfter.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 100))
    expect(gcra.requests.slice(0, 20).every((r) => r.allowed)).toBe(true)
    expect(gcra.requests[20]!.decisions[0]).toMatchObject({ allowed: false, retryAfterMs: 100 })
    expect(tatAfter[20]).toBe(2000)
  })
})

describe('the lanes judge the same arrivals independently', () => {
  it('a rule set of all four rules admits only what every rule admits', () => {
    const scenario = scenarioNamed('minute-boundary')!
    const together = simulate({
      rules: scenario.lanes.flatMap((lane) => lane.rules),
      arrivals: scenario.arrivals,
    })
    expect(admittedBetween(together, 0, 100_000)).toBe(100)
  })
})

describe('the NGINX queue (rate=10r/s burst=20): 25 requests at once', () => {
  const [plain, nodelay, delayed] = run('nginx-queue') as [Simulation, Simulation, Simulation]
  /** Each request's wait before it is served (ms), or 'rejected'. */
  const waits = (lane: Simulation) =>
    lane.requests.map((r) => (r.allowed ? (r.decisions[0]!.delayMs ?? 0) : 'rejected'))

  it('#1 is served now, #2–#21 queued and released one every 100 ms (the last at 2.0 s), #22–#25 rejected', () => {
    expect(waits(plain)).toEqual([
      0,
      ...Array.from({ length: 20 }, (_, i) => (i + 1) * 100),
      ...Array(4).fill('rejected'),
    ])
    expect(plain.requests[21]!.decisions[0]!.retryAfterMs).toBeGreaterThan(0)
  })

  it('with nodelay, #1–#21 are served now: the meter', () => {
    expect(waits(nodelay)).toEqual([...Array(21).fill(0), ...Array(4).fill('rejected')])
  })

  it('with delay=10, the first 11 are served now and the rest spaced 100 ms apart', () => {
    expect(waits(delayed)).toEqual([
      ...Array(11).fill(0),
      ...Array.from({ length: 10 }, (_, i) => (i + 1) * 100),
      ...Array(4).fill('rejected'),
    ])
  })

  it('the queue holds at most burst = 20 while it drains, and is empty by 2.0 s', () => {
    const held = plain.states.map((s) => s.used)
    expect(Math.max(...held)).toBeLessThanOrEqual(21)
    expect(stateAt(plain, 2100)?.used).toBe(0)
  })
})
