import { pipeline, type Readable, Transform } from 'node:stream'
import type { ResponseMeter } from '@tollgate/core/adapter'
import type { Context } from 'koa'

/**
 * Reads the body the app left in `ctx.body` into `meter`, once the app has answered and before
 * an outer middleware (compression) changes it: a string or bytes whole, an object as the JSON
 * Koa sends, a Node stream (or, on Koa 3, a web `ReadableStream`) piece by piece as it is sent,
 * through a pass-through put in its place. A `Blob` or `Response` body (Koa 3) is not read: its
 * estimate stands.
 */
export function meterBody(ctx: Context, meter: ResponseMeter): void {
  meter.head(ctx.status, (name) => fieldValue(ctx.response.get(name)))
  const body: unknown = ctx.body
  if (body === null || body === undefined) return
  if (typeof body === 'string' || body instanceof Uint8Array) {
    meter.write(body)
    return
  }
  if (typeof (body as Readable).pipe === 'function') {
    // An error of the app's stream destroys the pass-through with it: Koa handles it there.
    ctx.body = pipeline(body as Readable, passThrough(meter), () => {})
    return
  }
  if (typeof (body as ReadableStream).pipeThrough === 'function') {
    ctx.body = (body as ReadableStream).pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          meter.write(chunk)
          controller.enqueue(chunk)
        },
      }),
    )
    return
  }
  // Koa 3's `Blob` and `Response` bodies are not read; any other object is sent as JSON.
  if (typeof (body as Blob).arrayBuffer === 'function') return
  try {
    meter.write(JSON.stringify(body))
  } catch {
    // Koa fails to send it too: its error handler answers, and the meter ends with that.
  }
}

function passThrough(meter: ResponseMeter): Transform {
  return new Transform({
    transform(chunk, _encoding, done) {
      meter.write(chunk)
      done(null, chunk)
    },
  })
}

function fieldValue(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined
  return Array.isArray(value) ? value.join(', ') : String(value)
}
