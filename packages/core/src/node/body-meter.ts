import type { ResponseMeter } from '../adapter/response-meter.js'
import { endWhenFinished, type NodeResponseEvents } from './response-end.js'

/** What `meterNodeBody` uses of a Node `http.ServerResponse`: a shape, so no Node import. */
export type NodeResponseBody = NodeResponseEvents & {
  /** A field's value as set so far (read at the first write, for the status and fields). */
  getHeader(name: string): number | string | string[] | undefined
  /** Wrapped, so that each piece written is read on its way. */
  write: (...args: never[]) => boolean
  /** Wrapped, so that the last piece is read on its way. */
  end: (...args: never[]) => unknown
}

/**
 * Feeds a Node response to a meter as it is sent (Express's `res`, a Fastify reply's `raw`):
 * `res.write` and `res.end` are wrapped, so each piece the app writes (`res.json`, `res.send`,
 * `stream.pipe(res)`) is read before it is passed on untouched; the status and fields are read
 * at the first. The meter ends when the response is handed to the socket, and is aborted when
 * the connection closes first. Mounted after a compression middleware (which wraps these
 * methods itself), it reads the body before compression.
 */
export function meterNodeBody(res: NodeResponseBody, meter: ResponseMeter): void {
  const { write, end } = res as unknown as Record<'write' | 'end', (...args: unknown[]) => unknown>
  let headed = false
  const sent = (chunk: unknown) => {
    if (!headed) {
      headed = true
      meter.head(res.statusCode, (name) => fieldValue(res.getHeader(name)))
    }
    // `end(callback)` sends nothing; a chunk is a string or bytes.
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') meter.write(chunk)
  }
  const target = res as unknown as Record<'write' | 'end', (...args: unknown[]) => unknown>
  target.write = function meteredWrite(this: unknown, chunk: unknown, ...rest: unknown[]) {
    sent(chunk)
    return write.call(this, chunk, ...rest)
  }
  target.end = function meteredEnd(this: unknown, chunk?: unknown, ...rest: unknown[]) {
    sent(chunk)
    return end.call(this, chunk, ...rest)
  }
  endWhenFinished(res, meter)
}

function fieldValue(value: number | string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  return Array.isArray(value) ? value.join(', ') : String(value)
}
