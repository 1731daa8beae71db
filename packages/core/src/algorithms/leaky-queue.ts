import type { Decision } from '../decision.js'
import { shown } from '../options/option-values.js'
import { createScheduler } from '../wait/scheduler.js'
import { holdSlots } from '../wait/slot-holding.js'
import { inspectionCopy } from './inspection.js'
import { ceilDiv, floorDiv, MAX_FIELD_INTEGER, MAX_TIME_MS } from './integer.js'
import {
  costTooHigh,
  invalid,
  RATE_PARAMS,
  type RateParams,
  refuseUnknownParams,
  scaleRate,
} from './params.js'
import {
  noFallback,
  type RuleFieldAccess,
  type RuleFieldValues,
  withRuleFields,
} from './rule-fields.js'
import type { Algorithm, StateSlots } from './types.js'

const QUEUE_PARAMS = [...RATE_PARAMS, 'delay', 'maxWaitMs']

/** A queue rule: a rate rule whose excess waits for its slot instead of being refused. */
export type QueueParams = RateParams & {
  /**
   * How many excess requests are served at once before shaping starts (nginx `delay=`); `burst`
   * serves the whole queue at once (nginx `nodelay`, the meter). @default 0
   */
  readonly delay?: number
  /** A request whose slot lies further away than this many ms is refused at once. @default none */
  readonly maxWaitMs?: number
}

/**
 * Leaky bucket as a queue (NGINX `limit_req`): requests leave at `rate` per `periodMs`, one
 * emission interval apart; up to `burst` of them wait in line for their turn, and a request that
 * finds the line full is denied. The slot of a request is the GCRA's "next allowed time" (its
 * theoretical arrival time), kept as one number per key in ticks of 1/`unitsPerMs` ms, so every
 * slot is exact. An admitted request carries `delayMs`, how long it waits for its slot; the first
 * `delay` excess requests wait for nothing.
 *
 * `limit` is `burst + 1`: the request being served plus a full line, as nginx admits 21 of 25
 * simultaneous requests with `burst=20`.
 *
 * **Pro:** perfectly smooth output for a fragile upstream. **Con:** admitted requests wait, each
 * holding a connection; overload turns into latency.
 * @example leakyQueue({ rate: 10, burst: 20 }) // #1 now, #2–#21 100 ms apart, #22 denied
 */
export const leakyQueue: (params: QueueParams) => Algorithm = /* @__PURE__ */ withRuleFields(
  queueRule,
  {
    takes: ['delay', 'nodelay', 'maxWait'],
    read: readQueueFields,
    unsettled: "a queued request's slot is fixed when it is admitted",
    noFallback,
  },
)

function queueRule(params: QueueParams): Algorithm {
  refuseUnknownParams('leakyQueue', params, QUEUE_PARAMS)
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaleRate(params)
  if (burst >= MAX_FIELD_INTEGER) {
    throw invalid('burst', `at most ${MAX_FIELD_INTEGER - 1} for a queue, got ${burst}`)
  }
  // Slots are ticks since the epoch: they must stay exact below 2^53. A queue releasing more
  // than about 2,000 requests per ms has no line to wait in.
  if ((MAX_TIME_MS + 2) * unitsPerMs + 4 * capacity > Number.MAX_SAFE_INTEGER) {
    throw invalid('rate', `${rate} per ${periodMs} ms is too fine a rate for a queue`)
  }
  const delay = params.delay ?? 0
  if (!Number.isSafeInteger(delay) || delay < 0 || delay > burst) {
    throw invalid('delay', `expected a whole number from 0 to the burst (${burst}), got ${delay}`)
  }
  const maxWaitMs = params.maxWaitMs
  if (maxWaitMs !== undefined && (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0)) {
    throw invalid('maxWaitMs', `expected whole ms ≥ 0, got ${maxWaitMs}`)
  }
  const limit = burst + 1
  const delayTicks = delay * unitsPerToken
  const maxWaitTicks = maxWaitMs === undefined ? Number.POSITIVE_INFINITY : maxWaitMs * unitsPerMs
  // How far ahead the next slot can lie on a steady clock (a full line and one being served),
  // and a step back the key is held for besides; anything further: the clock stepped back.
  const lineTicks = capacity + unitsPerToken
  const holdTicks = (2 * ceilDiv(lineTicks, unitsPerMs) + 1) * unitsPerMs

  /** Ticks the next slot lies ahead of `now` (0 when passed), after moving a state held too long. */
  function aheadOf(slots: StateSlots, offset: number, now: number): number {
    const ahead = slots[offset]! - now * unitsPerMs
    if (ahead < holdTicks) return Math.max(0, ahead)
    // Moved to a full line at `now` rather than locked out for the whole step.
    slots[offset] = now * unitsPerMs + lineTicks
    return lineTicks
  }

  /** Whole requests of cost 1 that still find room in the line with the next slot `ahead`. */
  const roomAt = (ahead: number) =>
    ahead >= lineTicks ? 0 : Math.min(limit, floorDiv(lineTicks - ahead, unitsPerToken))

  return {
    name: 'leaky_queue',
    limit,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst, delayTicks, maxWaitTicks },
    stateSize: 1,
    scheduler: createScheduler,
    holdSlots,
    init(slots, offset, now) {
      slots[offset] = now * unitsPerMs
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 1)
        offset = 0
      }
      const ahead = aheadOf(slots, offset, now)
      const resetAfterMs = ceilDiv(ahead, unitsPerMs)
      if (cost === 0) {
        return {
          allowed: true,
          remaining: roomAt(ahead),
          limit,
          resetAfterMs,
          retryAfterMs: undefined,
        }
      }
      // The request's own slot (where its last unit leaves), in ticks from now.
      const slot = ahead + (cost - 1) * unitsPerToken
      const waitTicks = Math.max(0, slot - delayTicks)
      if (slot > capacity || waitTicks > maxWaitTicks) {
        // The line moves one tick per tick: the request fits once both excesses have drained.
        const untilRoom = slot - capacity
        const untilNearEnough = waitTicks - maxWaitTicks
        return {
          allowed: false,
          remaining: roomAt(ahead),
          limit,
          resetAfterMs,
          retryAfterMs: ceilDiv(Math.max(untilRoom, untilNearEnough), unitsPerMs),
        }
      }
      const after = ahead + cost * unitsPerToken
      if (commit) slots[offset] = now * unitsPerMs + after
      return {
        allowed: true,
        remaining: roomAt(after),
        limit,
        resetAfterMs: ceilDiv(after, unitsPerMs),
        retryAfterMs: undefined,
        delayMs: ceilDiv(waitTicks, unitsPerMs),
      }
    },
    refund(slots, offset, cost, _chargedAt, now) {
      // A request that left the line gives its slot back: the ones after it keep theirs, and the
      // next arrival takes the freed one.
      const ahead = aheadOf(slots, offset, now)
      slots[offset] = now * unitsPerMs + Math.max(0, ahead - cost * unitsPerToken)
    },
    freshAt(slots, offset) {
      return ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}

/**
 * Reads a queue rule's `delay`, `nodelay` and `maxWait` into `values` (`nodelay` as a `delay` of
 * the whole burst, checked against it once the burst is known); false after reporting a problem.
 */
function readQueueFields(rule: RuleFieldAccess, values: RuleFieldValues): boolean {
  const { fields, labels, issue } = rule
  let ok = true
  const { delay, nodelay, maxWait } = fields
  if (nodelay !== undefined && typeof nodelay !== 'boolean') {
    ok = false
    issue(labels.nodelay!, `expected true or false, got ${shown(nodelay)}`)
  } else if (nodelay === true && delay !== undefined) {
    ok = false
    issue(
      labels.delay,
      `give ${labels.delay} (how many are served at once) or ${labels.nodelay} (all of the burst), not both`,
    )
  } else if (nodelay === true && typeof fields.burst === 'number') {
    values.delay = fields.burst
  }
  if (delay !== undefined) {
    if (typeof delay === 'number' && Number.isSafeInteger(delay) && delay >= 0) values.delay = delay
    else {
      ok = false
      issue(labels.delay!, `expected a whole number ≥ 0, got ${shown(delay)}`)
    }
  }
  values.delay ??= 0
  if (maxWait === rule.reported) ok = false
  else if (maxWait !== undefined) {
    const checked = rule.toMilliseconds(maxWait)
    if (typeof checked === 'string') {
      ok = false
      issue(labels.maxWait!, checked)
    } else values.maxWait = checked
  }
  return ok
}
