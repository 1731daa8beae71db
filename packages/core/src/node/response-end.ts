import type { Exchange } from '../adapter/kit.js'

/** The part of an exchange that hears how it ended. */
type Ending = Pick<Exchange<never, never>, 'end' | 'abort'>

/** What `endWhenFinished` uses of a Node `http.ServerResponse`: a shape, so no Node import. */
export type NodeResponseEvents = {
  readonly statusCode: number
  /**
   * Listens once for the response being handed to the socket (`finish`) or the connection closing
   * (`close`).
   */
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * Reports a Node response's end to its exchange: `end(statusCode)` once the response is handed to
 * the socket (`'finish'`), `abort()` when the connection closes before that (`'close'` without
 * `'finish'`; after one, the exchange ignores it). Only for exchanges the kit watches (`watchesEnd`):
 * it costs two listeners per request.
 */
export function endWhenFinished(res: NodeResponseEvents, exchange: Ending): void {
  res.once('finish', () => exchange.end(res.statusCode))
  res.once('close', () => exchange.abort())
}
