import type { ReadFields } from '@tollgate/core/fields'
import type { Scheduler } from '@tollgate/core/store'
import type { ClientEvent } from './events.js'
import {
  advertisedWait,
  backoff,
  mayRepeat,
  type ResolvedRetry,
  withJitter,
} from './retry-policy.js'

/** What to call once a prepared request has its response: learns from it, returns its fields. */
export type Completion = (response: Response | undefined) => ReadFields | undefined

export type SendContext = {
  readonly prepare: (
    request: Request,
    signal?: AbortSignal,
    deadline?: number,
  ) => Promise<Completion>
  readonly send: (request: Request) => Promise<Response>
  readonly retry: ResolvedRetry
  readonly scheduler: Scheduler
  readonly random: () => number
  readonly maxJitterMs: number
  readonly emit: (event: ClientEvent) => void
}

/**
 * Sends `request`, and sends it again while it is refused (429, 503) and a retry is allowed:
 * attempts left, a method safe to repeat, and a wait that ends within `maxTotalMs`. The caller's
 * signal aborts any wait. The last refusal is returned as it is, never thrown.
 */
export async function sendWithRetries(request: Request, context: SendContext): Promise<Response> {
  const { retry, scheduler, emit } = context
  const signal = request.signal
  const deadline = scheduler.now() + retry.maxTotalMs
  const repeatable = mayRepeat(request, retry)
  const url = request.url
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= retry.attempts || !repeatable
    // Each attempt sends a copy, so the body is there again for the next one.
    const outgoing = last ? request : request.clone()
    const complete = await context.prepare(outgoing, signal, deadline)
    let response: Response
    try {
      response = await context.send(outgoing)
    } catch (error) {
      complete(undefined)
      throw error
    }
    const fields = complete(response)
    if (!retry.statuses.has(response.status)) return response
    const status = response.status
    if (!repeatable) return giveUp(emit, response, 'method', url)
    if (last) return giveUp(emit, response, 'attempts', url)
    const advertised = fields === undefined ? undefined : advertisedWait(fields)
    const delayMs =
      advertised === undefined
        ? backoff(retry, attempt, context.random)
        : withJitter(advertised.delayMs, context.maxJitterMs, context.random)
    if (scheduler.now() + delayMs > deadline) return giveUp(emit, response, 'time', url)
    emit({
      type: 'retry',
      reason: advertised?.reason ?? 'backoff',
      policy: advertised?.policy,
      status,
      attempt: attempt + 1,
      delayMs,
      url,
    })
    // The refusal's body is not needed: release its connection.
    await response.body?.cancel().catch(() => undefined)
    await scheduler.sleep(delayMs, signal)
  }
}

function giveUp(
  emit: (event: ClientEvent) => void,
  response: Response,
  reason: 'attempts' | 'time' | 'method',
  url: string,
): Response {
  emit({ type: 'give-up', reason, status: response.status, url })
  return response
}
