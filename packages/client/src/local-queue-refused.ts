/**
 * A call a leaky queue rule refuses: its line is full (`burst` calls already wait) or its slot
 * lies further away than the rule's `maxWait`. Waiting would not help, so `acquire` rejects at
 * once, as the server answers 429 rather than queueing the request.
 */
export class LocalQueueRefusedError extends Error {
  override readonly name = 'LocalQueueRefusedError'
  /** The rule that refused, e.g. `local-1`. */
  readonly rule: string
  /** Ms until a call of the same cost would find room (the rule's `retryAfterMs`). */
  readonly retryAfterMs: number

  constructor(rule: string, retryAfterMs: number) {
    super(
      `[@tollgate/client] Rule "${rule}": the queue has no slot for this call; retry in ${retryAfterMs} ms`,
    )
    this.rule = rule
    this.retryAfterMs = retryAfterMs
  }
}
