import { checkWhole } from '../options/option-values.js'
import type { ObservedEvent, Observer } from './events.js'
import { type HeavyHitter, SpaceSaving } from './space-saving.js'

/** Options of `shadowReport`: how many keys it keeps per rule, and the length of its intervals. */
export type ShadowReportOptions = {
  /** Keys kept per shadow rule (the sketch's fixed memory). @default 64 */
  readonly capacity?: number
  /** The length of one interval of counts, in ms. @default 60000 (a minute) */
  readonly intervalMs?: number
  /** How many intervals are kept, the latest last. @default 1440 (a day of minutes) */
  readonly intervals?: number
}

/** What one shadow rule would have done, since the report started. */
export type ShadowRuleReport = {
  readonly rule: string
  /** Requests it would have denied. */
  readonly denied: number
  /** When it first and last would have denied one (ms), or undefined before any. */
  readonly firstSeen: number | undefined
  readonly lastSeen: number | undefined
  /** The keys it would have hit hardest, heaviest first (see `HeavyHitter` for the bounds). */
  readonly heaviest: readonly HeavyHitter[]
  /** The most any `heaviest` count may be above the truth: at most denied ÷ capacity. */
  readonly errorBound: number
  /** Would-be denials per interval, oldest first: only intervals that had some. */
  readonly intervals: readonly { readonly start: number; readonly denied: number }[]
}

/**
 * What `shadowReport` returns: an `Observer` to give `observedLimiter`, and the reports it has
 * gathered.
 */
export type ShadowReport = Observer & {
  /** Every shadow rule's report, in the order the rules were first seen. */
  read(): readonly ShadowRuleReport[]
  /** One rule's report; undefined for a rule that is not a shadow rule of an observed limiter. */
  readRule(rule: string): ShadowRuleReport | undefined
}

type RuleState = {
  readonly sketch: SpaceSaving
  firstSeen: number | undefined
  lastSeen: number | undefined
  /** Interval starts and counts, in a ring indexed by interval number. */
  readonly starts: number[]
  readonly counts: number[]
}

/**
 * An observer that keeps, for each shadow rule, whom it would have hit: the heaviest keys in a
 * Space-Saving sketch of fixed size, would-be denials per interval, first and last seen. Memory
 * is bounded by capacity × rules and intervals × rules, whatever the traffic. Keys are kept as
 * the limiter built them (`api_key:k_123`), in this process only: read them from code; the
 * metrics export (`shadowReportMetrics`) never carries them.
 * @example
 * const report = shadowReport()
 * const limiter = observedLimiter({ rules, observers: [report] })
 * // a day later
 * console.table(report.readRule('new-login-limit')?.heaviest)
 */
export function shadowReport(options: ShadowReportOptions = {}): ShadowReport {
  const capacity = whole(options.capacity ?? 64, 'capacity')
  const intervalMs = whole(options.intervalMs ?? 60_000, 'intervalMs')
  const intervals = whole(options.intervals ?? 1440, 'intervals')
  const rules = new Map<string, RuleState>()

  const track = (rule: string) => {
    if (rules.has(rule)) return
    rules.set(rule, {
      sketch: new SpaceSaving(capacity),
      firstSeen: undefined,
      lastSeen: undefined,
      starts: new Array(intervals).fill(-1),
      counts: new Array(intervals).fill(0),
    })
  }

  function count(state: RuleState, key: string, at: number): void {
    state.sketch.add(key, at)
    state.firstSeen ??= at
    state.lastSeen = at
    const number = Math.floor(at / intervalMs)
    const slot = number % intervals
    const start = number * intervalMs
    if (state.starts[slot] !== start) {
      state.starts[slot] = start
      state.counts[slot] = 0
    }
    state.counts[slot]!++
  }

  function reportOf(rule: string, state: RuleState): ShadowRuleReport {
    const latest = state.lastSeen ?? 0
    const oldest = (Math.floor(latest / intervalMs) - intervals + 1) * intervalMs
    const kept = state.starts
      .map((start, i) => ({ start, denied: state.counts[i]! }))
      .filter((interval) => interval.start >= oldest && interval.denied > 0)
      .sort((a, b) => a.start - b.start)
    return {
      rule,
      denied: state.sketch.total,
      firstSeen: state.firstSeen,
      lastSeen: state.lastSeen,
      heaviest: state.sketch.top(),
      errorBound: state.sketch.errorBound,
      intervals: kept,
    }
  }

  return {
    events: ['decision', 'rules.update'],
    attach(limiter) {
      for (const rule of limiter.rules) if (rule.mode === 'shadow') track(rule.id)
    },
    observe(event: ObservedEvent) {
      // A shadow rule added while running is tracked from then on.
      if (event.type === 'rules.update') {
        for (const rule of event.rules) if (rule.mode === 'shadow') track(rule.id)
        return
      }
      if (event.type !== 'decision') return
      const denied = event.verdict.shadowDenied
      for (let i = 0; i < denied.length; i++) {
        const decision = denied[i]!
        const state = rules.get(decision.rule)
        // A missing-identity denial has no key: it is counted under the empty key.
        if (state !== undefined) count(state, decision.key ?? '', event.verdict.at)
      }
    },
    read: () => [...rules].map(([rule, state]) => reportOf(rule, state)),
    readRule(rule) {
      const state = rules.get(rule)
      return state === undefined ? undefined : reportOf(rule, state)
    },
  }
}

function whole(value: number, field: string): number {
  return checkWhole(field, value, { min: 1 }, 'shadowReport():')
}
