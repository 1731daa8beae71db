import type { Limiter, Verdict } from '../limiter/types.js'
import type { UsageReader } from '../usage/usage-reader.js'
import type { WarnOnce } from '../warnings.js'
import { abortOnSignal, endWhenSent } from '../web-response-end.js'
import { type BodyText, bodyText, sizeOf } from './body-text.js'
import { cancels, pending, readCosts, whyNoCost } from './response-cost.js'

// One admitted response read for what it cost, as its adapter sees it go out: its status and
// fields, then its body piece by piece. At its end the cost read settles the reservation; a
// client that left first cancels it. Reached only from `settleFrom`: an app that does not
// settle bundles none of it.

/** A finished response, as a function of `settleFrom` reads it. */
export type SettleResponse = {
  /** The status sent. */
  readonly status: number
  /** One field of the response, by name (any case). */
  readonly header: (name: string) => string | undefined
  /**
   * The size of the body as the middleware saw it go out (before an outer middleware compressed
   * it): bytes, a text piece counting its length.
   */
  readonly bytes: number
  /**
   * The body's text when it was held whole: within `maxBodyBytes`; undefined when it was larger,
   * or `maxBodyBytes` is 0.
   */
  readonly text: string | undefined
}

/**
 * What a response cost, from the response: one cost for every rule with `settle` (or, given by
 * rule, that rule's), costs by rule id, or undefined when it cannot tell (the estimate stands,
 * or the reservation is cancelled: see `cancelIf`).
 */
export type CostOfResponse = (
  response: SettleResponse,
) => number | Readonly<Record<string, number>> | undefined

/** Where a cost is read: the usage an LLM API reports (`usageReader()`), or a function. */
export type SettleSource = UsageReader | CostOfResponse

/**
 * Reads one admitted response's cost as the adapter sends it. `head` comes first (before any
 * `write`), then each piece of the body, then `end` once it was sent whole or `abort` when the
 * client went away first; only the first of those two counts.
 */
export type ResponseMeter = {
  /** The response's status and fields: a `text/event-stream` body is read as it streams. */
  head(status: number, header: (name: string) => string | undefined): void
  /** A piece of the body: bytes (`Uint8Array`, `ArrayBuffer`) or text; anything else is passed over. */
  write(chunk: unknown): void
  /** Sent whole: the cost read settles the reservation. Returns a pending store call, if any. */
  end(status: number): Promise<void> | undefined
  /** The client went away before the end: the reservation is given back (pending, if async). */
  abort(): Promise<void> | undefined
  /**
   * Reads a WHATWG `Response` as it is sent (Hono, or any fetch runtime, Workers included): its
   * status and fields, then its body piece by piece through a stream put in its place, ending
   * the meter with the body, or aborting it when the reader gives up or `signal` (the request's)
   * aborts first. `keep` is handed the pending settle or cancel of an asynchronous store, for
   * runtimes where background work must be handed over (Workers' `waitUntil`). Returns the
   * response to send instead.
   */
  watch<R extends WatchedResponse>(
    response: R,
    signal?: AbortSignalLike | undefined,
    keep?: ((pending: Promise<void>) => void) | undefined,
  ): R
}

/** What `watch` uses of a WHATWG `Response`. */
export type WatchedResponse = {
  readonly status: number
  readonly headers: {
    /** The field's value, or null when absent (as `Headers.get`). */
    get(name: string): string | null
  }
  readonly body: unknown
}

/** What `watch` uses of an `AbortSignal`. */
type AbortSignalLike = Parameters<typeof abortOnSignal>[1]

/** `settleFrom`'s arguments, checked: where each cost is read, and what to do without one. */
export type MeterPlan = {
  /** The sources: `rule` undefined for one source of every rule with `settle`. */
  readonly sources: ReadonlyArray<{
    readonly rule: string | undefined
    readonly from: SettleSource
  }>
  readonly maxBodyBytes: number
  readonly cancelIf: (response: SettleResponse) => boolean
}

/** What a meter uses of the limiter: it settles, so both methods are there. */
export type SettlingLimiter = Required<Pick<Limiter, 'settle' | 'cancel'>>

export type StreamReader = ReturnType<UsageReader['stream']>

const NO_FIELDS = () => undefined

/** A meter for one admitted verdict. */
export function createMeter(
  plan: MeterPlan,
  limiter: SettlingLimiter,
  verdict: Verdict,
  warn: WarnOnce,
): ResponseMeter {
  let header: (name: string) => string | undefined = NO_FIELDS
  let headed = false
  let done = false
  let bytes = 0
  /** One stream reader per usage source, for a body of server-sent events. */
  let streams: Array<StreamReader | undefined> | undefined
  let text: BodyText | undefined

  // The status is read at the end, where it is final (an error handler may have changed it).
  function head(_status: number, fields: (name: string) => string | undefined): void {
    if (headed) return
    headed = true
    header = fields
    const events = /text\/event-stream/i.test(fields('content-type') ?? '')
    if (events) {
      streams = plan.sources.map(({ from }) =>
        typeof from === 'function' ? undefined : from.stream(),
      )
    }
    // Text is held for a JSON usage, and for functions, which may read it.
    const wantsText = plan.sources.some(({ from }) => typeof from === 'function' || !events)
    if (wantsText && plan.maxBodyBytes > 0) text = bodyText(plan.maxBodyBytes)
  }

  const meter: ResponseMeter = {
    head,
    watch(response, signal, keep) {
      head(response.status, (name) => response.headers.get(name) ?? undefined)
      const kept = keep === undefined ? meter : keeping(meter, keep)
      abortOnSignal(kept, signal)
      return endWhenSent(kept, response)
    },
    write(chunk) {
      if (done) return
      if (!headed) head(0, NO_FIELDS)
      const size = sizeOf(chunk)
      if (size === undefined) return
      bytes += size
      if (streams !== undefined) for (const stream of streams) stream?.write(chunk as string)
      text?.write(chunk as string | ArrayBufferView | ArrayBuffer, size)
    },
    end(ended) {
      if (done) return undefined
      done = true
      const response: SettleResponse = { status: ended, header, bytes, text: text?.end() }
      const costs = readCosts(plan, response, streams, warn)
      if (costs === undefined) {
        if (cancels(plan, response, warn)) return pending(() => limiter.cancel(verdict), warn)
        warn(
          'WARN_SETTLE_NO_COST',
          `settle: a ${ended} response reported no cost (${whyNoCost(plan, text, streams)}): its reservation counts as its estimate`,
        )
        return undefined
      }
      return pending(() => limiter.settle(verdict, costs), warn)
    },
    abort() {
      if (done) return undefined
      done = true
      return pending(() => limiter.cancel(verdict), warn)
    },
  }
  return meter
}

/** `meter`, with the pending work of its end or abort handed to `keep`. */
function keeping(
  meter: ResponseMeter,
  keep: (pending: Promise<void>) => void,
): Pick<ResponseMeter, 'write' | 'end' | 'abort'> {
  const kept = (pending: Promise<void> | undefined) => {
    if (pending !== undefined) keep(pending)
    return pending
  }
  return {
    write: meter.write,
    end: (status) => kept(meter.end(status)),
    abort: () => void kept(meter.abort()),
  }
}
