/** Something the client did that an SDK may want to log or meter. */
export type ClientEvent =
  | {
      /** A call waited before it was sent. */
      readonly type: 'wait'
      /** `limiter`: the local limiter's budget; `learned`: a policy the server reported. */
      readonly reason: 'limiter' | 'learned'
      /** The learned policy's name (`Retry-After` for a refusal's wait); undefined for the limiter. */
      readonly policy: string | undefined
      readonly delayMs: number
      readonly url: string
    }
  | {
      /** A refused call is sent again after `delayMs`. */
      readonly type: 'retry'
      /** `retry-after`: the field's wait; `policy`: an exhausted policy's `t`; `backoff`: neither was sent. */
      readonly reason: 'retry-after' | 'policy' | 'backoff'
      readonly policy: string | undefined
      readonly status: number
      /** The attempt about to be made: 2 for the first retry. */
      readonly attempt: number
      readonly delayMs: number
      readonly url: string
    }
  | {
      /** A refused call is returned to the caller as it is. */
      readonly type: 'give-up'
      /**
       * `attempts`: no attempt left; `time`: the wait would end past `maxTotalMs`; `method`: not
       * safe to repeat (and no `Idempotency-Key`).
       */
      readonly reason: 'attempts' | 'time' | 'method'
      readonly status: number
      readonly url: string
    }

/**
 * Receives every `ClientEvent` (waits, retries, give-ups): for logs and metrics. One that throws is
 * ignored.
 */
export type EventListener = (event: ClientEvent) => void

/** Calls the listener; one that throws is ignored, so logging can never break a request. */
export function emitter(listener: EventListener | undefined): EventListener {
  if (listener === undefined) return () => {}
  return (event) => {
    try {
      listener(event)
    } catch {
      // a metrics hook's failure is not the request's
    }
  }
}
