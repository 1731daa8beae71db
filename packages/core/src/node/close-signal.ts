import type { WaitSignal } from '../limiter/types.js'

/** What `closeSignal` uses of a Node `http.ServerResponse`: a shape, so no Node import. */
export type NodeResponseClose = {
  /** True once the response (or its socket) was destroyed: the client is gone already. */
  readonly destroyed?: boolean
  /** True once the whole response was handed to the socket. */
  readonly writableFinished?: boolean
  /** Listens once for the connection closing. */
  once(event: 'close', listener: () => void): unknown
}

/**
 * A signal that aborts when a Node response's connection closes before the response finished:
 * the client went away (for the kit's `Framework.disconnected`, asked only for a request that
 * waits in a queue). A client already gone is aborted from the start.
 */
export function closeSignal(res: NodeResponseClose): WaitSignal {
  const listeners: Array<() => void> = []
  const signal = {
    aborted: false,
    reason: undefined as unknown,
    addEventListener(_type: 'abort', listener: () => void) {
      listeners.push(listener)
    },
    removeEventListener(_type: 'abort', listener: () => void) {
      const at = listeners.indexOf(listener)
      if (at >= 0) listeners.splice(at, 1)
    },
  }
  const abort = () => {
    if (signal.aborted) return
    signal.aborted = true
    signal.reason = new Error('the client closed the connection while its request was queued')
    for (const listener of listeners.splice(0)) listener()
  }
  if (res.destroyed === true) abort()
  else
    res.once('close', () => {
      if (res.writableFinished !== true) abort()
    })
  return signal
}
