import type { Charge, Outcome } from '@tollgate/core/store'
import type { CallWatch, Deadline } from './call.js'
import type { RedisScriptClient } from './client.js'
import { parseRuleSetReplies } from './reply.js'
import type { RuleSetScripts } from './rule-set-scripts.js'
import type { Script } from './scripts/index.js'

/** A request waiting for its rule set's script call. */
type Waiting = {
  readonly charges: readonly Charge[]
  /**
   * Its key, or its keys when it charges several rules: one per charge, all different, but the
   * identity's once for the rules it holds (RuleSetScripts.sent).
   */
  readonly keys: string | readonly string[]
  readonly now: number
  readonly resolve: (outcome: Outcome) => void
  readonly reject: (error: unknown) => void
}

/** The requests of one rule set waiting for the same call, and the deadline they share. */
type Batch = { readonly waiting: Waiting[]; readonly deadline: Deadline }

/**
 * One rule set's traffic: its calls on their way to Redis, how many of those run a script this
 * sender has not yet seen answer (`cold`), and the batch gathering behind them.
 */
type Lane = { inFlight: number; cold: number; pending: Batch | undefined }

/**
 * Keys one script call reads at most (32 one-rule requests, 16 of two rules, 32 of three rules
 * in one identity value, …). Fewer than
 * a busy gateway has in flight, on purpose: while Redis runs one batch, the gateway reads the
 * replies of the one before and prepares the next, so both processes stay busy. One batch of
 * everything would make them take turns. (64 in flight, this machine: 16 to 32 one-rule
 * requests per call doubled decisions per second over one call per request; 128 gained far
 * less.)
 */
const MAX_BATCH_KEYS = 32

export type RequestSender = (
  scripts: RuleSetScripts,
  charges: readonly Charge[],
  keys: string | readonly string[],
  now: number,
) => Promise<Outcome>

/**
 * Sends requests to their rule set's scripts (see scripts/rule-set.lua.ts). A request whose
 * rule set has no call on its way goes out at once, alone, through the script shaped for one
 * request. With `coalesce`, a request that arrives while a call of its rule set is on its way
 * joins a batch instead: the requests a process makes in that turn of the event loop (a burst of
 * traffic, or the replies of a previous call all answered at once) go out together at the end of
 * the turn (`setImmediate`), one call deciding them all, in order, each exactly as its own call
 * would. Every call costs Redis and the client a fixed price (reading the command, running the
 * script, `TIME`, writing the reply), so a busy gateway pays it once per batch instead of once
 * per request, and an idle one never waits for a batch that has nobody else in it.
 *
 * Without `coalesce` (or on Redis Cluster, where keys of one call must share a slot) each request
 * is its own call, at once.
 *
 * On a client that auto-pipelines (`RedisScriptClient.autoPipelining`), which sends one pipeline
 * at a time, a request sent alone would hold a pipeline's round trip of its own, and the requests
 * made in the same tick would wait for it to come back before they leave: twice the round trips.
 * There every request joins its lane's batch, and batches go out at the end of the tick
 * (`process.nextTick`, after the promise callbacks that make the requests of a burst, before the
 * client's own flush), so they leave in one pipeline; a lone request still leaves in the same
 * tick, through the one-request script.
 */
export function requestSender(options: {
  readonly client: RedisScriptClient
  readonly serverTime: boolean
  readonly timeoutMs: number
  readonly coalesce: boolean
  /** What times the calls. */
  readonly watch: CallWatch
}): RequestSender {
  const { client, serverTime, timeoutMs, coalesce } = options
  const { callScriptThen, deadlineIn } = options.watch
  const gatherEveryRequest = coalesce && client.autoPipelining === true
  const schedule = gatherEveryRequest ? scheduleAtTickEnd : scheduleFlush
  const lanes = new Map<RuleSetScripts, Lane>()
  /**
   * Scripts that have answered: Redis holds them. A call by a script not known to be held may
   * come back NOSCRIPT and go again with its source, after the calls sent behind it; so nothing
   * is sent behind a cold call until it settles, and a lane's requests stay in order.
   */
  const warm = new Set<Script>()
  // Lanes whose pending batch goes out at the end of this turn.
  const due: [RuleSetScripts, Lane][] = []

  function flush(): void {
    const lanesDue = due.splice(0)
    for (const [scripts, lane] of lanesDue) {
      // Behind a cold call the batch waits for it to settle (`release`).
      if (lane.cold === 0) release(scripts, lane)
    }
  }

  /** Sends the lane's pending requests, as many calls as their number needs, until one is cold. */
  function release(scripts: RuleSetScripts, lane: Lane): void {
    while (lane.pending !== undefined && lane.cold === 0) {
      const batch = lane.pending
      const most = requestsPerCall(scripts.keysRead)
      const chunk =
        batch.waiting.length <= most
          ? batch
          : { waiting: batch.waiting.splice(0, most), deadline: batch.deadline }
      if (chunk === batch) lane.pending = undefined
      // Runs from setImmediate or a reply's callback, where anything thrown would end the
      // process or be lost: fail the chunk.
      try {
        send(scripts, lane, chunk)
      } catch (error) {
        for (const request of chunk.waiting) request.reject(error)
      }
    }
  }

  function send(scripts: RuleSetScripts, lane: Lane, { waiting, deadline }: Batch): void {
    // Every request of a batch charges the same rules, so the same number of them and of keys.
    const rules = waiting[0]!.charges.length
    const keysRead = scripts.keysRead
    const perRequest = serverTime ? rules : rules + 1
    const keys: string[] = new Array(waiting.length * keysRead)
    const args: string[] = new Array(waiting.length * perRequest)
    for (let i = 0; i < waiting.length; i++) {
      const request = waiting[i]!
      const at = i * perRequest
      if (rules === 1) {
        keys[i] = request.keys as string
        args[at] = costText(request.charges[0]!.cost)
      } else {
        for (let j = 0; j < keysRead; j++) keys[i * keysRead + j] = request.keys[j]!
        for (let j = 0; j < rules; j++) args[at + j] = costText(request.charges[j]!.cost)
      }
      if (!serverTime) args[at + rules] = String(request.now)
    }
    const script = waiting.length === 1 ? scripts.one : scripts.many
    const cold = !warm.has(script)
    lane.inFlight++
    if (cold) lane.cold++
    const settled = (answered: boolean) => {
      lane.inFlight--
      if (!cold) return
      if (answered) warm.add(script)
      if (--lane.cold === 0) release(scripts, lane)
    }
    callScriptThen(
      client,
      script,
      keys,
      args,
      deadline,
      (reply) => {
        // A reply that makes no sense throws here, before anything is settled: then `failed`.
        const outcomes = parseRuleSetReplies(reply, waiting, rules, serverTime)
        settled(true)
        for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(outcomes[i]!)
      },
      (error: unknown) => {
        settled(false)
        for (const request of waiting) request.reject(error)
      },
    )
  }

  function laneOf(scripts: RuleSetScripts): Lane {
    let lane = lanes.get(scripts)
    if (lane === undefined) {
      // Rule sets are bounded (prepare.ts), so lanes are too.
      lane = { inFlight: 0, cold: 0, pending: undefined }
      lanes.set(scripts, lane)
    }
    return lane
  }

  return (scripts, charges, keys, now) =>
    new Promise<Outcome>((resolve, reject) => {
      const request: Waiting = { charges, keys, now, resolve, reject }
      const lane = laneOf(scripts)
      if (!coalesce || (!gatherEveryRequest && lane.inFlight === 0 && lane.pending === undefined)) {
        send(scripts, lane, { waiting: [request], deadline: deadlineIn(timeoutMs) })
        return
      }
      let batch = lane.pending
      if (batch === undefined) {
        batch = { waiting: [], deadline: deadlineIn(timeoutMs) }
        lane.pending = batch
        if (due.length === 0) schedule(flush)
        due.push([scripts, lane])
      }
      batch.waiting.push(request)
      if (batch.waiting.length >= requestsPerCall(scripts.keysRead) && lane.cold === 0) {
        lane.pending = undefined
        send(scripts, lane, batch)
      }
    })
}

/** As many requests reading `keys` keys each as fit in MAX_BATCH_KEYS, and at least one. */
function requestsPerCall(keys: number): number {
  return Math.max(1, Math.floor(MAX_BATCH_KEYS / keys))
}

/** At the end of this turn of the event loop, after the I/O callbacks that may add requests. */
const scheduleFlush: (callback: () => void) => void =
  typeof setImmediate === 'function' ? (callback) => setImmediate(callback) : queueMicrotask

/**
 * At the end of this tick: after the promise callbacks now queued (and those they queue), before
 * the I/O of the next turn; the auto-pipelining client flushes its own commands the same way,
 * after ours. Outside Node, the end of the microtasks queued so far.
 */
const scheduleAtTickEnd: (callback: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function'
    ? (callback) => process.nextTick(callback)
    : queueMicrotask

/** Costs as script arguments; costs come from rules (a handful of values), so they are kept. */
const costTexts = new Map<number, string>()

function costText(cost: number): string {
  let text = costTexts.get(cost)
  if (text === undefined) {
    text = String(cost)
    if (costTexts.size < 64) costTexts.set(cost, text)
  }
  return text
}
