import type { Decision } from '../decision.js'
import { shown } from '../options/option-values.js'
import { createScheduler } from '../wait/scheduler.js'
import { holdSlots } from '../wait/slot-holding.js'
import { createSlotQueues, type SlotQueueParams } from '../wait/slot-queues.js'
import { CARRY_STRATEGIES, type CarryStrategy } from './carried-use.js'
import { MAX_FIELD_INTEGER, MAX_TIME_MS } from './integer.js'
import { costTooHigh, invalid, refuseUnknownParams } from './params.js'
import {
  noFallback,
  type RuleFieldAccess,
  type RuleFieldValues,
  withRuleFields,
} from './rule-fields.js'
import type { Algorithm } from './types.js'

const CONCURRENCY_PARAMS = ['limit', 'retryAfterMs', 'queue', 'maxWaitMs', 'queueOrder']

/** A concurrency rule: at most `limit` units in flight at once. */
export type ConcurrencyParams = {
  readonly limit: number
  /**
   * What a refusal tells the client to wait (`Retry-After`), in ms: nobody knows when a slot
   * frees, so it is a hint. @default 1000
   */
  readonly retryAfterMs?: number
  /**
   * How many refused requests may wait for a slot, per key, instead of being refused at once.
   * @default 0 (none wait)
   */
  readonly queue?: number
  /** How long a request waits for a slot before it is refused after all, in ms. @default 10000 */
  readonly maxWaitMs?: number
  /**
   * Which waiting request a freed slot goes to: the oldest (`fifo`) or the newest (`lifo`, which
   * also refuses the oldest when a newcomer finds the line full), as .NET's
   * `QueueProcessingOrder` offers. @default 'fifo'
   */
  readonly queueOrder?: QueueOrder
}

/** Which waiting request a freed slot goes to. */
export type QueueOrder = SlotQueueParams['order']

/** @default 10 s: a request waits that long for a slot unless the rule says otherwise. */
export const DEFAULT_SLOT_WAIT_MS = 10_000

/** The quota unit of drafts 8–11 for a limit on requests in flight. */
const CONCURRENT_REQUESTS = 'concurrent-requests'

/**
 * Concurrency, as the built-in table (`BUILT_IN_ALGORITHMS`) holds it; apps name it as
 * `concurrency-part.ts` exports it, carrying what the adapters need of it.
 *
 * Concurrency: counts requests in flight instead of requests over time. State: [units held].
 * A request is admitted while `held + cost ≤ limit` and holds its cost until it is given back
 * (`refund`, which the limiter's `release` calls when the response ends): time frees nothing.
 *
 * **Pro:** protects a resource whose cost is the time a request holds it (a slow report, a
 * database pool), whoever calls. **Con:** a slot is only as good as its release; the adapters
 * release on every way a response ends.
 * @example concurrency({ limit: 4 }) // four reports at once
 */
export const concurrency: (params: ConcurrencyParams) => Algorithm = /* @__PURE__ */ withRuleFields(
  concurrencyRule,
  {
    takes: ['queue', 'queueOrder', 'maxWait'],
    read: readSlotQueueFields,
    unsettled: 'a concurrency slot is held until released, whatever the request costs',
    noFallback,
  },
)

function concurrencyRule(params: ConcurrencyParams): Algorithm {
  refuseUnknownParams('concurrency', params, CONCURRENCY_PARAMS)
  const limit = params.limit
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FIELD_INTEGER) {
    throw invalid('limit', `expected a whole number from 1 to ${MAX_FIELD_INTEGER}, got ${limit}`)
  }
  const retryAfterMs = params.retryAfterMs ?? 1000
  if (!Number.isSafeInteger(retryAfterMs) || retryAfterMs < 1 || retryAfterMs > MAX_TIME_MS) {
    throw invalid('retryAfterMs', `expected whole ms ≥ 1, got ${retryAfterMs}`)
  }
  const slotQueue = slotQueueOf(params, retryAfterMs)
  return {
    name: 'concurrency',
    limit,
    // No window: the quota is a number at once (`qu="concurrent-requests"`, no `w`).
    policy: { quota: limit, windowMs: 0, unit: CONCURRENT_REQUESTS },
    params: { kind: 'concurrency', limit, retryAfterMs },
    stateSize: 1,
    heldUntilReleased: true,
    holdSlots,
    // Only a rule with a line waits, on the limiter's scheduler.
    ...(slotQueue === undefined
      ? {}
      : { slotQueue, scheduler: createScheduler, slotQueues: createSlotQueues }),
    init(slots, offset) {
      slots[offset] = 0
    },
    decide(slots, offset, cost, _now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      const held = slots[offset]!
      if (cost > 0 && held + cost > limit) {
        return {
          allowed: false,
          remaining: Math.max(0, limit - held),
          limit,
          resetAfterMs: retryAfterMs,
          retryAfterMs,
        }
      }
      if (commit) slots[offset] = held + cost
      return {
        allowed: true,
        remaining: Math.max(0, limit - held - cost),
        limit,
        resetAfterMs: 0,
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost) {
      slots[offset] = Math.max(0, slots[offset]! - cost)
    },
    // A key holding slots is never fresh: dropping it would hand its slots out again.
    freshAt(slots, offset) {
      return slots[offset] === 0 ? 0 : MAX_TIME_MS
    },
  }
}

/** The line a rule's refused requests wait in; undefined without `queue`. */
function slotQueueOf(params: ConcurrencyParams, retryAfterMs: number): SlotQueueParams | undefined {
  const { queue = 0, maxWaitMs, queueOrder } = params
  if (!Number.isSafeInteger(queue) || queue < 0 || queue > MAX_FIELD_INTEGER) {
    throw invalid('queue', `expected a whole number from 0 to ${MAX_FIELD_INTEGER}, got ${queue}`)
  }
  if (queue === 0) {
    const stray =
      maxWaitMs !== undefined ? 'maxWaitMs' : queueOrder !== undefined ? 'queueOrder' : undefined
    if (stray !== undefined)
      throw invalid(stray, 'applies to requests waiting for a slot: give queue too')
    return undefined
  }
  const wait = maxWaitMs ?? DEFAULT_SLOT_WAIT_MS
  if (!Number.isSafeInteger(wait) || wait < 1 || wait > MAX_TIME_MS) {
    throw invalid('maxWaitMs', `expected whole ms ≥ 1, got ${wait}`)
  }
  const order = queueOrder ?? 'fifo'
  if (order !== 'fifo' && order !== 'lifo') {
    throw invalid('queueOrder', `expected 'fifo' or 'lifo', got ${String(order)}`)
  }
  // Often enough that a wait shorter than the hint looks a few times before it ends.
  const lookAgainMs = Math.min(retryAfterMs, Math.max(1, Math.floor(wait / 4)))
  return { length: queue, maxWaitMs: wait, order, lookAgainMs }
}

/**
 * Reads a concurrency rule's `queue`, `maxWait` and `queueOrder` into `values`, the last two only
 * with a queue, and refuses an `onChange` other than `keep`. False after reporting a problem.
 */
function readSlotQueueFields(rule: RuleFieldAccess, values: RuleFieldValues): boolean {
  const { fields, labels, issue } = rule
  const { queue, queueOrder, maxWait, onChange } = fields
  let ok = true
  // Any other strategy is refused; one that is none is already reported.
  if (onChange !== 'keep' && CARRY_STRATEGIES.includes(onChange as CarryStrategy)) {
    ok = false
    issue(
      labels.onChange,
      `a concurrency rule's requests in flight always carry over: use "keep" or remove it`,
    )
  }
  if (queue !== undefined) {
    if (typeof queue === 'number' && Number.isSafeInteger(queue) && queue >= 0) values.queue = queue
    else {
      ok = false
      issue(
        labels.queue,
        `expected a whole number ≥ 0 (how many may wait for a slot), got ${shown(queue)}`,
      )
    }
  }
  const queued = (values.queue ?? 0) > 0
  for (const field of ['maxWait', 'queueOrder'] as const) {
    if (fields[field] === undefined || fields[field] === rule.reported || queued || !ok) continue
    ok = false
    issue(labels[field]!, `applies to requests waiting for a slot: give ${labels.queue} too`)
  }
  if (!ok) return false
  if (queueOrder !== undefined) {
    if (queueOrder === 'fifo' || queueOrder === 'lifo') values.queueOrder = queueOrder
    else {
      ok = false
      issue(labels.queueOrder!, `expected "fifo" or "lifo", got ${shown(queueOrder)}`)
    }
  }
  if (maxWait === rule.reported) ok = false
  else if (maxWait !== undefined) {
    const checked = rule.toMilliseconds(maxWait)
    if (typeof checked === 'string') {
      ok = false
      issue(labels.maxWait!, checked)
    } else if (checked < 1) {
      ok = false
      issue(labels.maxWait!, `expected a wait of at least 1 ms, got ${checked} ms`)
    } else values.maxWait = checked
  }
  return ok
}
