// How a fetch runtime's response is followed to its end: plain WHATWG streams and no import, so
// that what carries it (the concurrency algorithm, whose slots are held until the response has
// been sent; the settle meter) may sit in any layer.

/**
 * What hears how a response ended: an adapter kit's exchange, or a response meter (which also
 * reads each piece of the body as it goes, `write`).
 */
type Ending = {
  end(status: number): unknown
  abort(): unknown
  readonly write?: ((chunk: unknown) => void) | undefined
}

/** What is used of a WHATWG `ReadableStream` (core is typed without the DOM library). */
type BodyStream = {
  getReader(): {
    read(): Promise<{ readonly done: boolean; readonly value?: unknown }>
    cancel(reason?: unknown): Promise<void>
  }
}

/** What is used of a WHATWG `Response`. */
export type WebResponse = { readonly status: number; readonly body: unknown }

type StreamController = {
  enqueue(chunk: unknown): void
  close(): void
  error(reason: unknown): void
}

type ResponseConstructor = new (body: unknown, init: WebResponse) => WebResponse

type StreamConstructor = new (source: {
  pull(controller: StreamController): Promise<void>
  cancel(reason: unknown): Promise<void>
}) => unknown

/**
 * Ends `exchange` once `response` has been sent whole: at once for a response without a body, else
 * when its body stream has been read to the end (`end(status)`), or `abort()` when the reader
 * gives up first (the client went away) or the body fails. Returns the response to send:
 * `response` itself, or a copy of it (`rebuild`, by default `new Response(body, response)`)
 * around a body that reports its end, for Web runtimes (Hono on Node, Bun, Deno, Workers) where
 * the handler's promise settles before a streamed body is sent.
 * @example c.res = endWhenSent(exchange, c.res)
 */
export function endWhenSent<R extends WebResponse>(
  exchange: Ending,
  response: R,
  rebuild: (body: unknown) => R = (body) =>
    new (globalThis as { Response?: ResponseConstructor }).Response!(body, response) as R,
): R {
  const body = response.body as BodyStream | null
  const Stream = (globalThis as { ReadableStream?: StreamConstructor }).ReadableStream
  const status = response.status
  if (body == null || Stream === undefined) {
    exchange.end(status)
    return response
  }
  const reader = body.getReader()
  return rebuild(
    new Stream({
      async pull(controller) {
        let chunk: { readonly done: boolean; readonly value?: unknown }
        try {
          chunk = await reader.read()
        } catch (error) {
          exchange.abort()
          controller.error(error)
          return
        }
        if (chunk.done) {
          controller.close()
          exchange.end(status)
        } else {
          exchange.write?.(chunk.value)
          controller.enqueue(chunk.value)
        }
      },
      cancel(reason) {
        exchange.abort()
        return reader.cancel(reason)
      },
    }),
  )
}

/** What is used of an `AbortSignal`. */
type Signal = {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
}

/**
 * Aborts `exchange` when `signal` does: a Web request's signal, which Hono's Node server (and
 * runtimes like Deno and Bun) abort when the client disconnects before the response is sent.
 * After the exchange has ended, an abort changes nothing.
 */
export function abortOnSignal(exchange: Ending, signal: Signal | undefined): void {
  if (signal?.aborted) exchange.abort()
  else signal?.addEventListener('abort', () => exchange.abort(), { once: true })
}

/**
 * Both, as a fetch runtime's adapter uses them for a request that holds slots
 * (`AdapterKit.responseEnd`): `abort` on the request's signal before the handler runs, `end` on
 * the response it returns. Carried by the `concurrency` a middleware is composed of, so that one
 * without concurrency rules bundles neither.
 */
export const WEB_RESPONSE_END = { abort: abortOnSignal, end: endWhenSent }

/** How a fetch runtime's adapter follows a response that holds slots to its end. */
export type WebResponseEnd = typeof WEB_RESPONSE_END
