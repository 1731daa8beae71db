import { checkCost, checkTime } from '../algorithms/step.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Charge, Store } from '../store/types.js'
import { TraceError } from './trace-error.js'
import type {
  Arrival,
  SimulatedRequest,
  SimulateOptions,
  Simulation,
  StateSample,
} from './types.js'

const BUILT_IN_IDENTITIES = ['ip', 'api_key', 'user']
const DEFAULT_READS = 400
/** Reads of every key's state between arrivals, at most: a guard against a 1 ms step over days. */
const MAX_READS = 100_000

/**
 * Replays a trace through a rule set on a virtual clock: the real limiter (`createLimiter`) on
 * the real memory store, so what it shows is what a gateway with these rules would do. Returns
 * every decision, and each rule's state for each key over time: after every request and read
 * (a cost-0 `check`, which takes nothing) between arrivals. Pure: no timers, no I/O.
 * Rules are refused as at start-up (`RuleValidationError`); a bad arrival throws `TraceError`.
 * @example
 * const run = simulate({ rules, arrivals: [{ at: 0 }, { at: 0 }, { at: 500 }] })
 * run.requests.filter((r) => r.allowed).length
 */
export function simulate(options: SimulateOptions): Simulation {
  const order = checkedOrder(options.arrivals)
  const warnings: string[] = []
  let costOverride: number | undefined
  let tooCostly: { rule: string; limit: number } | undefined
  const memory = memoryStore()
  // The trace's own costs reach the real store in place of the rules': the limiter charges
  // what its rules say, so a request that names a cost is charged that under every rule.
  const store: Store = {
    consume(charges, now) {
      const cost = costOverride
      if (cost === undefined) return memory.consume(charges, now)
      const over = charges.find((charge) => cost > charge.algorithm.limit)
      if (over !== undefined) tooCostly = { rule: over.rule, limit: over.algorithm.limit }
      return memory.consume(
        charges.map((charge): Charge => ({ ...charge, cost })),
        now,
      )
    },
    refund: (charges, chargedAt, now) => memory.refund(charges, chargedAt, now),
  }
  let clockNow = 0
  const limiter = createLimiter({
    rules: options.rules,
    store,
    clock: { now: () => clockNow },
    logger: { warn: (message) => warnings.push(message) },
    customIdentities: options.customIdentities,
  })
  const identityNames = [
    ...new Set([...BUILT_IN_IDENTITIES, ...limiter.rules.flatMap((rule) => rule.match.identity)]),
  ]
  const arrivals = options.arrivals
  const first = arrivals[order[0] ?? -1]?.at ?? 0
  const last = arrivals[order[order.length - 1] ?? -1]?.at ?? first
  const from = options.from ?? first
  const until = options.until ?? last
  const every = readInterval(options.sampleEveryMs, from, until)

  const requests: SimulatedRequest[] = []
  const states: StateSample[] = []
  /** Every (rule, store key) seen so far, in order of appearance. */
  const known = new Map<string, { rule: string; key: string }>()

  const readAll = (at: number) => {
    clockNow = at
    for (const { rule, key } of known.values()) {
      const decision = limiter.check(key, rule, { cost: 0, now: at }) as RuleDecision
      states.push(sample(at, rule, key, 'read', decision))
    }
  }

  let nextRead = from
  for (let position = 0; position < order.length; position++) {
    const index = order[position]!
    const arrival = arrivals[index]!
    const at = arrival.at
    const startsMoment = position === 0 || arrivals[order[position - 1]!]!.at !== at
    if (startsMoment) {
      for (; nextRead < at && nextRead <= until; nextRead += every) readAll(nextRead)
      readAll(at)
      if (nextRead === at) nextRead += every
    }
    clockNow = at
    costOverride = arrival.cost
    tooCostly = undefined
    const verdict = limiter.decide(factsOf(arrival, identityNames), { now: at }) as Verdict
    costOverride = undefined
    if (tooCostly !== undefined) {
      const { rule, limit } = tooCostly
      throw new TraceError(
        `cost ${arrival.cost} exceeds rule "${rule}"'s capacity of ${limit}: it could never pass`,
        index,
        'cost',
      )
    }
    const decisions =
      arrival.cost === undefined
        ? verdict.decisions
        : verdict.decisions.map((d) => ({ ...d, cost: arrival.cost! }))
    requests.push({
      index,
      at,
      arrival,
      allowed: verdict.allowed,
      reason: verdict.reason,
      decisions,
    })
    for (const decision of decisions) {
      if (decision.key === undefined) continue
      const id = `${decision.rule}\u0000${decision.key}`
      if (!known.has(id)) {
        known.set(id, { rule: decision.rule, key: decision.key })
        // A key never seen before starts full (`Algorithm.init`), as a read before would show.
        states.push({ ...fresh(decision), at, rule: decision.rule, key: decision.key })
      }
      states.push(sample(at, decision.rule, decision.key, 'request', decision))
    }
  }
  for (; nextRead <= until; nextRead += every) readAll(nextRead)
  return { rules: limiter.rules, requests, states, warnings, from, until }
}

function sample(
  at: number,
  rule: string,
  key: string,
  phase: StateSample['phase'],
  decision: RuleDecision,
): StateSample {
  const { remaining, limit, resetAfterMs } = decision
  return { at, rule, key, phase, remaining, used: limit - remaining, limit, resetAfterMs }
}

function fresh(decision: RuleDecision) {
  const limit = decision.limit
  return { phase: 'read' as const, remaining: limit, used: 0, limit, resetAfterMs: 0 }
}

function factsOf(arrival: Arrival, identityNames: readonly string[]) {
  const key = arrival.key ?? 'client'
  const identities: Record<string, string> = {}
  for (const name of identityNames) identities[name] = key
  Object.assign(identities, arrival.identities)
  return {
    method: (arrival.method ?? 'GET').toUpperCase(),
    path: arrival.path ?? '/',
    plan: arrival.plan,
    identities,
  }
}

/** Positions of the arrivals by time, those at one time in trace order; each one checked. */
function checkedOrder(arrivals: readonly Arrival[]): number[] {
  if (!Array.isArray(arrivals)) throw new TraceError('expected an array of arrivals', 0, 'arrivals')
  arrivals.forEach((arrival, index) => {
    if (typeof arrival !== 'object' || arrival === null) {
      throw new TraceError('expected an object with at least `at`', index, 'arrival')
    }
    checked(index, 'at', () => checkTime(arrival.at))
    if (arrival.cost !== undefined) checked(index, 'cost', () => checkCost(arrival.cost!))
    if (arrival.key !== undefined && (typeof arrival.key !== 'string' || arrival.key === '')) {
      throw new TraceError(`expected a non-empty string, got ${String(arrival.key)}`, index, 'key')
    }
  })
  return arrivals.map((_, index) => index).sort((a, b) => arrivals[a]!.at - arrivals[b]!.at)
}

function checked(index: number, field: string, check: () => void): void {
  try {
    check()
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^\[tollgate\] /, '') : ''
    throw new TraceError(message, index, field)
  }
}

function readInterval(given: number | undefined, from: number, until: number): number {
  const span = Math.max(0, until - from)
  const every = given ?? Math.max(1, Math.ceil(span / DEFAULT_READS))
  if (!Number.isSafeInteger(every) || every < 1) {
    throw new TraceError(`expected whole ms ≥ 1, got ${given}`, 0, 'sampleEveryMs')
  }
  if (span / every > MAX_READS) {
    throw new TraceError(
      `${span} ms read every ${every} ms is more than ${MAX_READS} reads: read less often`,
      0,
      'sampleEveryMs',
    )
  }
  return every
}
