import { admittedBetween, SCENARIOS, type Simulation, simulateLanes } from '@tollgate/core/simulate'

/** A worked figure of the specification as the simulator reproduces it, in words. */
export type FigureFacts = {
  readonly name: string
  readonly title: string
  readonly facts: readonly string[]
}

const count = (simulation: Simulation, at: number, allowed: boolean) =>
  simulation.requests.filter((r) => r.at === at && r.allowed === allowed).length

const DESCRIBE: Record<string, (lanes: readonly Simulation[]) => string[]> = {
  'free-plan-burst': ([bucket]) => {
    const last = bucket!.requests[bucket!.requests.length - 1]!.decisions[0]!
    return [
      `0 s: ${count(bucket!, 0, true)} allowed, ${count(bucket!, 0, false)} denied`,
      `0.5 s: ${count(bucket!, 500, true)} allowed, ${count(bucket!, 500, false)} denied`,
      `2.5 s: ${count(bucket!, 2500, true)} allowed, ${last.remaining} left`,
    ]
  },
  'minute-boundary': (lanes) => {
    const labels = ['Fixed window', 'Sliding log', 'Sliding counter', 'Token bucket']
    return lanes.map((lane, i) => {
      const before = admittedBetween(lane, 50_000, 60_000)
      const after = admittedBetween(lane, 60_000, 70_000)
      return `${labels[i]}: ${before} + ${after} = ${before + after}`
    })
  },
  'sliding-counter': ([counter]) => {
    const requests = counter!.requests
    const last = requests[requests.length - 1]!
    const before = counter!.states.find((s) => s.at === last.at && s.phase === 'read')!
    const decision = last.decisions[0]!
    return [
      `before it: 80 × 0.667 + 30 = 83.3, ${before.remaining} left`,
      `83.3 + 1 ≤ 100: ${decision.allowed ? 'allowed' : 'denied'}, ${decision.remaining} left`,
    ]
  },
  'gcra-21': ([gcra]) => {
    const requests = gcra!.requests
    const twentieth = requests[19]!.decisions[0]!
    const last = requests[20]!.decisions[0]!
    return [
      `requests 1–20 allowed, TAT after the 20th: ${twentieth.resetAfterMs / 1000} s`,
      `request 21 ${last.allowed ? 'allowed' : 'denied'}, retry in ${last.retryAfterMs} ms`,
    ]
  },
}

/** Every figure, run through the simulator as the page opens. */
export function figureFacts(): FigureFacts[] {
  return SCENARIOS.map((scenario) => {
    const lanes = simulateLanes(scenario.lanes, scenario.arrivals, scenario)
    const describe = DESCRIBE[scenario.name]
    const facts =
      describe?.(lanes) ??
      lanes.map(
        (lane, i) =>
          `${scenario.lanes[i]!.label}: ${admittedBetween(lane, 0, Number.MAX_SAFE_INTEGER)} admitted`,
      )
    return { name: scenario.name, title: scenario.title, facts }
  })
}
