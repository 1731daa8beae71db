import { RateLimitError } from '@tollgate/core'
import type { RedisScriptClient } from './client.js'
import type { Script } from './scripts/index.js'

/**
 * Runs a script by SHA, falling back to its source when the server answers `NOSCRIPT` (after a
 * `SCRIPT FLUSH`, a restart or a failover to a replica that never saw it). EVAL caches the script
 * again, so the next call is back to EVALSHA.
 */
export async function runScript(
  client: RedisScriptClient,
  script: Script,
  keys: readonly string[],
  args: readonly string[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys, args)
  } catch (error) {
    if (!isNoScript(error)) throw error
    return await client.eval(script.source, keys, args)
  }
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' && message.includes('NOSCRIPT')
}

/** A point in time (from `performance.now()`) by which a store call must have settled. */
export type Deadline = { readonly at: number; readonly timeoutMs: number }

export function deadlineIn(timeoutMs: number): Deadline {
  return { at: performance.now() + timeoutMs, timeoutMs }
}

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
}

let first: Waiting | undefined
let last: Waiting | undefined
let timer: ReturnType<typeof setTimeout> | undefined
let timerAt = Number.POSITIVE_INFINITY

function join(entry: Waiting): void {
  entry.previous = last
  if (last === undefined) first = entry
  else last.next = entry
  last = entry
  if (entry.deadline.at < timerAt) arm(entry.deadline.at)
}

function leave(entry: Waiting): void {
  const { previous, next } = entry
  if (previous === undefined) first = next
  else previous.next = next
  if (next === undefined) last = previous
  else next.previous = previous
  entry.previous = undefined
  entry.next = undefined
}

function arm(at: number): void {
  if (timer !== undefined) clearTimeout(timer)
  timerAt = at
  timer = setTimeout(sweep, Math.max(1, Math.ceil(at - performance.now())))
  // Never keep a process alive just to report a timeout nobody waits for any more.
  ;(timer as { unref?: () => void }).unref?.()
}

/** Expires every call whose deadline has passed, then re-arms for the earliest one left. */
function sweep(): void {
  timer = undefined
  timerAt = Number.POSITIVE_INFINITY
  const now = performance.now()
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

/**
 * Settles with `work`, or rejects with `ERR_RL_STORE_UNAVAILABLE` once the deadline passes (the
 * late answer is then ignored: the race keeps a handler on it, so it can never surface as an
 * unhandled rejection). Any error from `work` becomes `ERR_RL_STORE_UNAVAILABLE` too, with the
 * original as `cause`.
 */
export function beforeDeadline<T>(deadline: Deadline, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (deadline.at <= performance.now()) {
      reject(timedOut(deadline))
      return
    }
    const entry: Waiting = { deadline, reject, previous: undefined, next: undefined }
    join(entry)
    let pending: Promise<T>
    try {
      pending = work()
    } catch (error) {
      pending = Promise.reject(error)
    }
    pending.then(
      (value) => {
        leave(entry)
        resolve(value)
      },
      (error: unknown) => {
        leave(entry)
        reject(unavailable(error))
      },
    )
  })
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
