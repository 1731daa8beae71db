import type { RuleConfig } from '../rules/types.js'
import { simulate } from './simulate.js'
import type { Arrival, Simulation } from './types.js'

/** One rule set judging a scenario's arrivals; lanes run side by side, each on its own store. */
export type Lane = { readonly label: string; readonly rules: readonly RuleConfig[] }

/** A worked figure of the specification, as a trace and the rules it is drawn for. */
export type Scenario = {
  readonly name: string
  readonly title: string
  /** What the figure shows, in a sentence. */
  readonly caption: string
  readonly arrivals: readonly Arrival[]
  readonly lanes: readonly Lane[]
  readonly from: number
  readonly until: number
  readonly sampleEveryMs: number
}

/** `count` arrivals from `at`, `everyMs` apart (0: all at once). */
export function burst(count: number, at: number, everyMs = 0): Arrival[] {
  return Array.from({ length: count }, (_, i) => ({ at: at + i * everyMs }))
}

const perClient = { identity: 'ip' } as const
const freePlan = (algorithm: 'token_bucket' | 'gcra'): RuleConfig => ({
  id: `free-${algorithm.replace('_', '-')}`,
  match: perClient,
  algorithm,
  rate: 10,
  burst: 20,
})
const perMinute = (algorithm: 'fixed_window' | 'sliding_log' | 'sliding_window'): RuleConfig => ({
  id: algorithm.replace('_', '-'),
  match: perClient,
  algorithm,
  limit: 100,
  window: '60s',
})

/** nginx's `limit_req zone=... rate=10r/s` with `burst=20` and the given knobs. */
function nginxQueue(knobs: { readonly nodelay?: boolean; readonly delay?: number }): RuleConfig {
  return { id: 'nginx', match: perClient, algorithm: 'leaky_queue', rate: 10, burst: 20, ...knobs }
}

/** The specification's worked figures, by name. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'free-plan-burst',
    title: 'Watching them decide: the Free plan fed a burst',
    caption:
      'Token bucket, R = 10/s and B = 20: 25 requests at t = 0, 8 more at 0.5 s and one at 2.5 s.',
    arrivals: [...burst(25, 0), ...burst(8, 500), ...burst(1, 2500)],
    lanes: [{ label: 'Token bucket, Free plan', rules: [freePlan('token_bucket')] }],
    from: 0,
    until: 3500,
    sampleEveryMs: 10,
  },
  {
    name: 'minute-boundary',
    title: 'One burst across a minute boundary',
    caption:
      'Limit 100 per minute; t = 0 is 12:00:00. 10 requests/s from 12:00:50 to 12:01:10, 200 in all.',
    arrivals: burst(200, 50_000, 100),
    lanes: [
      { label: 'Fixed window', rules: [perMinute('fixed_window')] },
      { label: 'Sliding log', rules: [perMinute('sliding_log')] },
      { label: 'Sliding counter', rules: [perMinute('sliding_window')] },
      {
        label: 'Token bucket (B 100, R 1.67/s)',
        rules: [
          {
            id: 'token-bucket',
            match: perClient,
            algorithm: 'token_bucket',
            rate: 100,
            period: '60s',
            burst: 100,
          },
        ],
      },
    ],
    from: 40_000,
    until: 80_000,
    sampleEveryMs: 100,
  },
  {
    name: 'sliding-counter',
    title: 'A sliding counter decision, ordinary traffic',
    caption:
      'Limit 100 per 60 s: 80 requests in the 12:00 window, 30 in the 12:01 window, one more at 12:01:20.',
    arrivals: [...burst(80, 0), ...burst(30, 79_000), ...burst(1, 80_000)],
    lanes: [{ label: 'Sliding counter', rules: [perMinute('sliding_window')] }],
    from: 0,
    until: 90_000,
    sampleEveryMs: 500,
  },
  {
    name: 'gcra-21',
    title: 'GCRA, Free plan: 21 requests at t = 0 on a fresh key',
    caption:
      'T = 1/R = 100 ms, τ = (B − 1) × T = 1.9 s: the 21st request is told to retry in 100 ms.',
    arrivals: burst(21, 0),
    lanes: [{ label: 'GCRA, Free plan', rules: [freePlan('gcra')] }],
    from: 0,
    until: 2500,
    sampleEveryMs: 10,
  },
  {
    name: 'nginx-queue',
    title: 'The NGINX queue: rate=10r/s burst=20, 25 requests at once',
    caption:
      'leaky_queue, R = 10/s, a queue of 20: one served now, twenty released 100 ms apart, four rejected; with nodelay twenty-one now, with delay=10 eleven now.',
    arrivals: burst(25, 0),
    lanes: [
      { label: 'burst=20', rules: [nginxQueue({})] },
      { label: 'burst=20 nodelay', rules: [nginxQueue({ nodelay: true })] },
      { label: 'burst=20 delay=10', rules: [nginxQueue({ delay: 10 })] },
    ],
    from: 0,
    until: 2500,
    sampleEveryMs: 10,
  },
]

/** The scenario of that name, or undefined. */
export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name)
}

/** Runs the same arrivals through every lane, each on a store of its own. */
export function simulateLanes(
  lanes: readonly Lane[],
  arrivals: readonly Arrival[],
  window: { from?: number; until?: number; sampleEveryMs?: number } = {},
): Simulation[] {
  return lanes.map((lane) => simulate({ rules: lane.rules, arrivals, ...window }))
}
