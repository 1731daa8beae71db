import { RateLimitError } from '@tollgate/core'
import type { Clock, Timers } from '@tollgate/core/store'
import type { RedisScriptClient } from './client.js'
import type { Script } from './scripts/index.js'

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' && message.includes('NOSCRIPT')
}

/** A point in time (on the watch's clock) by which a store call must have settled. */
export type Deadline = { readonly at: number; readonly timeoutMs: number }

/**
 * What a call's `timeoutMs` is measured on: a clock (ms) and the timers that wake the watch over
 * calls in flight. Injected, a test makes a call time out by moving its own time, without
 * waiting for the budget to pass (see `RedisStoreOptions.deadlines`).
 */
export type DeadlineTime = { readonly clock: Clock; readonly timers: Timers }

/**
 * A call still waiting for its answer. Waiting calls form one doubly linked list watched by a
 * single timer armed for the earliest deadline: joining and leaving the list is a few pointer
 * writes, where a timer per call (setTimeout, unref, clearTimeout) cost more than the rest of
 * the store's work on a call. The timer is re-armed only when it fires, or when a call with an
 * earlier deadline arrives (a store with a shorter timeout).
 */
type Waiting = {
  readonly deadline: Deadline
  readonly reject: (error: unknown) => void
  previous: Waiting | undefined
  next: Waiting | undefined
  /** Still in the list: a call leaves once, when it times out or when its answer comes. */
  waiting: boolean
}

/** Script calls whose deadlines one timer watches, on one clock. */
export type CallWatch = {
  /** The deadline of a call starting now, `timeoutMs` on the watch's clock. */
  deadlineIn(timeoutMs: number): Deadline
  /**
   * Runs a script by SHA and settles with `read(reply)`, or rejects with
   * `ERR_RL_STORE_UNAVAILABLE` once the deadline passes (the late answer is then ignored: a
   * handler stays on it, so it can never surface as an unhandled rejection). Any error from the
   * client becomes `ERR_RL_STORE_UNAVAILABLE` too, with the original as `cause`; an error from
   * `read` (a reply that makes no sense) rejects as it is.
   *
   * When the server answers `NOSCRIPT` (after a `SCRIPT FLUSH`, a restart or a failover to a
   * replica that never saw the script) the source is sent instead, within the same deadline;
   * EVAL caches it again, so the next call is back to EVALSHA.
   */
  callScript<T>(
    client: RedisScriptClient,
    script: Script,
    keys: readonly string[],
    args: readonly string[],
    deadline: Deadline,
    read: (reply: unknown) => T,
  ): Promise<T>
  /**
   * `callScript` without a promise of its own: `answered` runs with the reply (anything it
   * throws goes to `failed` as it is), or `failed` with the error, exactly once. For a caller
   * that settles promises of its own (a batch's requests), one promise layer fewer per call.
   */
  callScriptThen(
    client: RedisScriptClient,
    script: Script,
    keys: readonly string[],
    args: readonly string[],
    deadline: Deadline,
    answered: (reply: unknown) => void,
    failed: (error: unknown) => void,
  ): void
}

/**
 * A watch over calls timed on `time`. Every store on the runtime's time shares one
 * (`systemCallWatch`), so a process arms one timer for all of their calls; a store given time of
 * its own (a test's) has its own.
 */
export function callWatch(time: DeadlineTime): CallWatch {
  const { clock, timers } = time
  let first: Waiting | undefined
  let last: Waiting | undefined
  let timer: unknown
  let timerAt = Number.POSITIVE_INFINITY

  function join(entry: Waiting): void {
    entry.previous = last
    if (last === undefined) first = entry
    else last.next = entry
    last = entry
    if (entry.deadline.at < timerAt) arm(entry.deadline.at)
  }

  function leave(entry: Waiting): void {
    // A call that timed out left the list then; its late answer must not unlink anyone else.
    if (!entry.waiting) return
    entry.waiting = false
    const { previous, next } = entry
    if (previous === undefined) first = next
    else previous.next = next
    if (next === undefined) last = previous
    else next.previous = previous
    entry.previous = undefined
    entry.next = undefined
  }

  function arm(at: number): void {
    if (timer !== undefined) timers.clearTimeout(timer)
    timerAt = at
    timer = timers.setTimeout(sweep, Math.max(1, Math.ceil(at - clock.now())))
    // Never keep a process alive just to report a timeout nobody waits for any more.
    ;(timer as { unref?: () => void } | undefined)?.unref?.()
  }

  /** Expires every call whose deadline has passed, then re-arms for the earliest one left. */
  function sweep(): void {
    timer = undefined
    timerAt = Number.POSITIVE_INFINITY
    const now = clock.now()
    let earliest = Number.POSITIVE_INFINITY
    let entry = first
    while (entry !== undefined) {
      const next = entry.next
      if (entry.deadline.at <= now) {
        leave(entry)
        entry.reject(timedOut(entry.deadline))
      } else if (entry.deadline.at < earliest) {
        earliest = entry.deadline.at
      }
      entry = next
    }
    if (earliest !== Number.POSITIVE_INFINITY) arm(earliest)
  }

  function callScriptThen(
    client: RedisScriptClient,
    script: Script,
    keys: readonly string[],
    args: readonly string[],
    deadline: Deadline,
    answered: (reply: unknown) => void,
    failed: (error: unknown) => void,
  ): void {
    if (deadline.at <= clock.now()) {
      failed(timedOut(deadline))
      return
    }
    const entry: Waiting = {
      deadline,
      reject: failed,
      previous: undefined,
      next: undefined,
      waiting: true,
    }
    join(entry)
    const onReply = (reply: unknown) => {
      if (!entry.waiting) return
      leave(entry)
      try {
        answered(reply)
      } catch (error) {
        failed(error)
      }
    }
    const onError = (error: unknown) => {
      if (!entry.waiting) return
      leave(entry)
      failed(unavailable(error))
    }
    attempt(() => client.evalsha(script.sha, keys, args)).then(onReply, (error: unknown) => {
      if (!isNoScript(error) || !entry.waiting) return onError(error)
      attempt(() => client.eval(script.source, keys, args)).then(onReply, onError)
    })
  }

  return {
    deadlineIn: (timeoutMs) => ({ at: clock.now() + timeoutMs, timeoutMs }),
    callScript: (client, script, keys, args, deadline, read) =>
      new Promise((resolve, reject) => {
        callScriptThen(
          client,
          script,
          keys,
          args,
          deadline,
          (reply) => resolve(read(reply)),
          reject,
        )
      }),
    callScriptThen,
  }
}

/**
 * The runtime's monotonic clock and timers, each looked up when called (so that fake timers
 * installed later apply): what a store times its calls on unless given `deadlines`.
 */
export const systemCallWatch: CallWatch = callWatch({
  clock: { now: () => performance.now() },
  timers: {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  },
})

/** The client's promise, or a rejected one if it threw instead of rejecting. */
function attempt(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return call()
  } catch (error) {
    return Promise.reject(error)
  }
}

function timedOut(deadline: Deadline): RateLimitError {
  return new RateLimitError(
    'ERR_RL_STORE_UNAVAILABLE',
    `Redis did not answer within ${deadline.timeoutMs} ms`,
  )
}

function unavailable(error: unknown): RateLimitError {
  const reason = error instanceof Error ? error.message : String(error)
  return new RateLimitError('ERR_RL_STORE_UNAVAILABLE', `Redis call failed: ${reason}`, {
    cause: error,
  })
}
