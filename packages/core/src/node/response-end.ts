import type { Pass } from '../adapter/kit.js'

/** The part of a pass that hears how its exchange ended. */
type Ending = Pick<Pass<never, never>, 'end' | 'abort'>

/** What `endWhenFinished` uses of a Node `http.ServerResponse`: a shape, so no Node import. */
export type NodeResponseEvents = {
  readonly statusCode: number
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * Reports a Node response's end to its pass: `end(statusCode)` once the response is handed to
 * the socket (`'finish'`), `abort()` when the connection closes before that (`'close'` without
 * `'finish'`; after one, the pass ignores it). Only for passes the kit watches (`watchesEnd`):
 * it costs two listeners per request.
 */
export function endWhenFinished(res: NodeResponseEvents, pass: Ending): void {
  res.once('finish', () => pass.end(res.statusCode))
  res.once('close', () => pass.abort())
}
