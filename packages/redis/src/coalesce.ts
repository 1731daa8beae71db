import type { Charge, Outcome } from '@tollgate/core'
import { callScript, type Deadline, deadlineIn } from './call.js'
import type { RedisScriptClient } from './client.js'
import { parseOneRuleReplies } from './reply.js'
import type { Script } from './scripts/index.js'

/** A one-rule request waiting for its rule's script call. */
type Waiting = {
  readonly charges: readonly Charge[]
  readonly key: string
  readonly now: number
  readonly resolve: (outcome: Outcome) => void
  readonly reject: (error: unknown) => void
}

/** The requests of one rule waiting for the same call, and the deadline they share. */
type Batch = { readonly waiting: Waiting[]; readonly deadline: Deadline }

/**
 * Requests one script call decides at most. Smaller than the requests a busy gateway has in
 * flight, on purpose: while Redis runs one batch, the gateway reads the replies of the one before
 * and prepares the next, so both processes stay busy. One batch of everything would make them
 * take turns. (64 in flight, this machine: 16 to 32 per call doubled decisions per second over
 * one call per request; 128 per call gained far less.)
 */
export const MAX_BATCH = 32

export type OneRuleSender = (
  script: Script,
  charges: readonly Charge[],
  key: string,
  now: number,
) => Promise<Outcome>

/**
 * Sends one-rule requests to their rule's script. With `coalesce`, the requests a process makes
 * in one turn of the event loop (a burst of traffic, or the replies of a previous call all
 * answered at once) go out together: one call per rule decides them all, in order, each exactly
 * as its own call would. Every call costs Redis and the client a fixed price (reading the
 * command, running the script, `TIME`, writing the reply), so a busy gateway pays it once per
 * batch instead of once per request. A request waits at most until the end of the current turn
 * (`setImmediate`); alone, it goes out by itself.
 *
 * Without `coalesce` (or on Redis Cluster, where keys of one call must share a slot) each request
 * is its own call, at once.
 */
export function oneRuleSender(options: {
  readonly client: RedisScriptClient
  readonly serverTime: boolean
  readonly timeoutMs: number
  readonly coalesce: boolean
}): OneRuleSender {
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
    const perRequest = serverTime ? 1 : 2
    const keys: string[] = new Array(waiting.length)
    const args: string[] = new Array(waiting.length * perRequest)
    for (let i = 0; i < waiting.length; i++) {
      const request = waiting[i]!
      keys[i] = request.key
      args[i * perRequest] = costText(request.charges[0]!.cost)
      if (!serverTime) args[i * 2 + 1] = String(request.now)
    }
    callScript(client, script, keys, args, deadline, (reply) =>
      parseOneRuleReplies(reply, waiting, serverTime),
    ).then(
      (outcomes) => {
        for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(outcomes[i]!)
      },
      (error: unknown) => {
        for (const request of waiting) request.reject(error)
      },
    )
  }

  return (script, charges, key, now) =>
    new Promise<Outcome>((resolve, reject) => {
      const request: Waiting = { charges, key, now, resolve, reject }
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
      if (batch.waiting.length >= MAX_BATCH) {
        pending.delete(script)
        send(script, batch)
      } else if (!flushScheduled) {
        flushScheduled = true
        scheduleFlush(flush)
      }
    })
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
