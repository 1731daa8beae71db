import type { Charge, Outcome } from '@tollgate/core'
import { callScript, type Deadline, deadlineIn } from './call.js'
import type { RedisScriptClient } from './client.js'
import { parseRuleSetReplies } from './reply.js'
import type { Script } from './scripts/index.js'

/** A request waiting for its rule set's script call. */
type Waiting = {
  readonly charges: readonly Charge[]
  /** Its key, or its keys when it charges several rules (one per charge, all different). */
  readonly keys: string | readonly string[]
  readonly now: number
  readonly resolve: (outcome: Outcome) => void
  readonly reject: (error: unknown) => void
}

/** The requests of one rule set waiting for the same call, and the deadline they share. */
type Batch = { readonly waiting: Waiting[]; readonly deadline: Deadline }

/**
 * Keys one script call covers at most (32 one-rule requests, 16 of two rules, …). Fewer than
 * a busy gateway has in flight, on purpose: while Redis runs one batch, the gateway reads the
 * replies of the one before and prepares the next, so both processes stay busy. One batch of
 * everything would make them take turns. (64 in flight, this machine: 16 to 32 one-rule
 * requests per call doubled decisions per second over one call per request; 128 gained far
 * less.)
 */
const MAX_BATCH_KEYS = 32

export type RequestSender = (
  script: Script,
  charges: readonly Charge[],
  keys: string | readonly string[],
  now: number,
) => Promise<Outcome>

/**
 * Sends requests to their rule set's script (see scripts/rule-set.lua.ts). With `coalesce`, the
 * requests a process makes in one turn of the event loop (a burst of traffic, or the replies of a
 * previous call all answered at once) go out together: one call per rule set decides them all,
 * in order, each exactly as its own call would. Every call costs Redis and the client a fixed
 * price (reading the command, running the script, `TIME`, writing the reply), so a busy gateway
 * pays it once per batch instead of once per request. A request waits at most until the end of
 * the current turn (`setImmediate`); alone, it goes out by itself.
 *
 * Without `coalesce` (or on Redis Cluster, where keys of one call must share a slot) each request
 * is its own call, at once.
 */
export function requestSender(options: {
  readonly client: RedisScriptClient
  readonly serverTime: boolean
  readonly timeoutMs: number
  readonly coalesce: boolean
}): RequestSender {
  const { client, serverTime, timeoutMs, coalesce } = options
  const pending = new Map<Script, Batch>()
  let flushScheduled = false

  function flush(): void {
    flushScheduled = false
    const batches = [...pending]
    pending.clear()
    for (const [script, batch] of batches) {
      // Runs from setImmediate, where anything thrown would end the process: fail the batch.
      try {
        send(script, batch)
      } catch (error) {
        for (const request of batch.waiting) request.reject(error)
      }
    }
  }

  function send(script: Script, { waiting, deadline }: Batch): void {
    // Every request of a batch charges the same rules, so the same number of them.
    const rules = waiting[0]!.charges.length
    const perRequest = serverTime ? rules : rules + 1
    const keys: string[] = new Array(waiting.length * rules)
    const args: string[] = new Array(waiting.length * perRequest)
    for (let i = 0; i < waiting.length; i++) {
      const request = waiting[i]!
      const at = i * perRequest
      if (rules === 1) {
        keys[i] = request.keys as string
        args[at] = costText(request.charges[0]!.cost)
      } else {
        for (let j = 0; j < rules; j++) {
          keys[i * rules + j] = request.keys[j]!
          args[at + j] = costText(request.charges[j]!.cost)
        }
      }
      if (!serverTime) args[at + rules] = String(request.now)
    }
    callScript(client, script, keys, args, deadline, (reply) =>
      parseRuleSetReplies(reply, waiting, rules, serverTime),
    ).then(
      (outcomes) => {
        for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(outcomes[i]!)
      },
      (error: unknown) => {
        for (const request of waiting) request.reject(error)
      },
    )
  }

  return (script, charges, keys, now) =>
    new Promise<Outcome>((resolve, reject) => {
      const request: Waiting = { charges, keys, now, resolve, reject }
      if (!coalesce) {
        send(script, { waiting: [request], deadline: deadlineIn(timeoutMs) })
        return
      }
      let batch = pending.get(script)
      if (batch === undefined) {
        batch = { waiting: [], deadline: deadlineIn(timeoutMs) }
        pending.set(script, batch)
      }
      batch.waiting.push(request)
      if (batch.waiting.length >= requestsPerCall(charges.length)) {
        pending.delete(script)
        send(script, batch)
      } else if (!flushScheduled) {
        flushScheduled = true
        scheduleFlush(flush)
      }
    })
}

/** As many requests of `rules` rules as fit in MAX_BATCH_KEYS keys, and at least one. */
function requestsPerCall(rules: number): number {
  return Math.max(1, Math.floor(MAX_BATCH_KEYS / rules))
}

/** At the end of this turn of the event loop, after the I/O callbacks that may add requests. */
const scheduleFlush: (callback: () => void) => void =
  typeof setImmediate === 'function' ? (callback) => setImmediate(callback) : queueMicrotask

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
