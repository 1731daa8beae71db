import type { Arrival, Lane, Scenario } from '@tollgate/core/simulate'

/** A lane drawn from an algorithm and its parameters, as the form edits them. */
export type ParamsLane = {
  readonly label: string
  readonly algorithm: string
  /** Rate rules. */
  readonly rate?: number
  readonly period?: string
  readonly burst?: number
  /** A leaky queue's excess served at once (nginx `delay=`; `nodelay` is the whole burst). */
  readonly delay?: number
  /** Window rules. */
  readonly limit?: number
  readonly window?: string
}

/** A lane whose rules are a pasted rules file (YAML or JSON, the spec's file shape). */
export type RulesLane = { readonly label: string; readonly rulesText: string }

export type LaneState = ParamsLane | RulesLane

/** Everything the page shows is a function of this, and this is in the URL. */
export type PageState = {
  readonly scenario: string
  /** The arrivals as a CSV trace, in the format `tollgate simulate --trace` reads. */
  readonly trace: string
  readonly lanes: readonly LaneState[]
  readonly from: number
  readonly until: number
  readonly every: number
}

export const RATE_ALGORITHMS = ['token_bucket', 'gcra', 'leaky_bucket', 'leaky_queue']
export const WINDOW_ALGORITHMS = ['fixed_window', 'sliding_log', 'sliding_window']

export function isRulesLane(lane: LaneState): lane is RulesLane {
  return 'rulesText' in lane
}

/** The page as a scenario opens it. */
export function stateOfScenario(scenario: Scenario): PageState {
  return {
    scenario: scenario.name,
    trace: traceText(scenario.arrivals),
    lanes: scenario.lanes.map(laneOf),
    from: scenario.from,
    until: scenario.until,
    every: scenario.sampleEveryMs,
  }
}

function laneOf(lane: Lane): LaneState {
  const rule = lane.rules[0]!
  if ('burst' in rule) {
    const period = typeof rule.period === 'number' ? `${rule.period}ms` : (rule.period ?? '1s')
    return {
      label: lane.label,
      algorithm: rule.algorithm,
      rate: rule.rate,
      period,
      burst: rule.burst,
      ...queueDelay(rule),
    }
  }
  if (!('window' in rule)) throw new Error(`lane ${lane.label}: ${rule.algorithm} has no form`)
  const window = typeof rule.window === 'number' ? `${rule.window}ms` : rule.window
  return { label: lane.label, algorithm: rule.algorithm, limit: rule.limit, window }
}

/** A queue rule's `delay`, with `nodelay` read as the whole burst. */
function queueDelay(rule: { readonly burst: number }): { delay?: number } {
  const knobs = rule as { readonly delay?: number; readonly nodelay?: boolean }
  if (knobs.nodelay === true) return { delay: rule.burst }
  return knobs.delay === undefined ? {} : { delay: knobs.delay }
}

/**
 * Arrivals as CSV, runs at a steady spacing written as one row: 200 requests 100 ms apart from
 * 50 s are `50000,200,100`.
 */
export function traceText(arrivals: readonly Arrival[]): string {
  const rows: Array<{ at: number; count: number; every: number }> = []
  for (const { at } of arrivals) {
    const run = rows[rows.length - 1]
    if (run !== undefined) {
      const next = run.at + run.count * run.every
      if (run.count === 1 && at >= run.at) {
        run.every = at - run.at
        run.count = 2
        continue
      }
      if (at === next) {
        run.count++
        continue
      }
    }
    rows.push({ at, count: 1, every: 0 })
  }
  return ['at_ms,count,every_ms', ...rows.map((r) => `${r.at},${r.count},${r.every}`)].join('\n')
}

const HASH_KEY = 'state='

export function encodeState(state: PageState): string {
  return `#${HASH_KEY}${encodeURIComponent(JSON.stringify(state))}`
}

/** The state in a URL's hash, or undefined when there is none or it cannot be read. */
export function decodeState(hash: string): PageState | undefined {
  const at = hash.indexOf(HASH_KEY)
  if (at < 0) return undefined
  try {
    const value: unknown = JSON.parse(decodeURIComponent(hash.slice(at + HASH_KEY.length)))
    return isPageState(value) ? value : undefined
  } catch {
    return undefined
  }
}

function isPageState(value: unknown): value is PageState {
  const state = value as PageState
  return (
    typeof state === 'object' &&
    state !== null &&
    typeof state.trace === 'string' &&
    Array.isArray(state.lanes) &&
    state.lanes.every(
      (lane) => typeof lane === 'object' && lane !== null && typeof lane.label === 'string',
    ) &&
    [state.from, state.until, state.every].every((n) => typeof n === 'number')
  )
}
