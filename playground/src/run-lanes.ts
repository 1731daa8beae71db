import type { RuleConfig } from '@tollgate/core'
import { loadRulesText } from '@tollgate/core/rules-file'
import { parseTrace, type Simulation, simulate } from '@tollgate/core/simulate'
import { isRulesLane, type LaneState, type PageState, RATE_ALGORITHMS } from './page-state.js'

type LaneResult =
  | { readonly label: string; readonly simulation: Simulation; readonly error?: undefined }
  | { readonly label: string; readonly simulation?: undefined; readonly error: string }

export type PageResult = {
  /** Set when the trace cannot be read: no lane runs. */
  readonly traceError?: string
  readonly lanes: readonly LaneResult[]
}

/** The rules a lane stands for: a pasted file as loaded at start-up, or one rule from the form. */
function laneRules(lane: LaneState): readonly RuleConfig[] {
  if (isRulesLane(lane)) {
    const text = lane.rulesText.trim()
    return loadRulesText(text, text.startsWith('[') || text.startsWith('{') ? 'json' : 'yaml')
  }
  const base = { id: lane.algorithm.replace(/_/g, '-'), match: { identity: 'ip' } }
  const rule = RATE_ALGORITHMS.includes(lane.algorithm)
    ? {
        ...base,
        algorithm: lane.algorithm,
        rate: lane.rate,
        period: lane.period,
        burst: lane.burst,
        ...(lane.delay === undefined ? {} : { delay: lane.delay }),
      }
    : { ...base, algorithm: lane.algorithm, limit: lane.limit, window: lane.window }
  // Whatever the form holds goes to validation as it is, which names what is wrong.
  return [rule as RuleConfig]
}

/** Replays the page's trace through every lane; each lane fails or runs on its own. */
export function runPage(state: PageState): PageResult {
  let arrivals: ReturnType<typeof parseTrace>
  try {
    arrivals = parseTrace(state.trace, 'csv')
  } catch (error) {
    return { traceError: messageOf(error), lanes: [] }
  }
  const window = { from: state.from, until: state.until, sampleEveryMs: state.every }
  return {
    lanes: state.lanes.map((lane): LaneResult => {
      try {
        return {
          label: lane.label,
          simulation: simulate({ rules: laneRules(lane), arrivals, ...window }),
        }
      } catch (error) {
        return { label: lane.label, error: messageOf(error) }
      }
    }),
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
