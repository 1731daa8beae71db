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
 * Settles with `work`, or rejects with `ERR_RL_STORE_UNAVAILABLE` once the deadline passes (the
 * late answer is then ignored: the race keeps a handler on it, so it can never surface as an
 * unhandled rejection). Any error from `work` becomes `ERR_RL_STORE_UNAVAILABLE` too, with the
 * original as `cause`.
 */
export function beforeDeadline<T>(deadline: Deadline, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const remaining = deadline.at - performance.now()
    if (remaining <= 0) {
      reject(timedOut(deadline))
      return
    }
    const timer = setTimeout(() => reject(timedOut(deadline)), Math.ceil(remaining))
    // Never keep a process alive just to report a timeout nobody waits for any more.
    ;(timer as { unref?: () => void }).unref?.()
    let pending: Promise<T>
    try {
      pending = work()
    } catch (error) {
      pending = Promise.reject(error)
    }
    pending.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
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
