/** What the demo and a gateway child process say to each other over the IPC channel. */

/** Demo → gateway: read `now` (ms since the epoch) from here on; answer `time-set` with the id. */
export type SetTime = { readonly type: 'set-time'; readonly id: number; readonly now: number }

export type GatewayMessage =
  /** Gateway → demo: listening on 127.0.0.1:`port`. */
  | { readonly type: 'listening'; readonly port: number }
  | { readonly type: 'time-set'; readonly id: number }
  /** Gateway → demo: it could not start. */
  | { readonly type: 'failed'; readonly message: string }

export function isSetTime(message: unknown): message is SetTime {
  const m = message as Partial<SetTime> | null
  return m?.type === 'set-time' && typeof m.id === 'number' && Number.isSafeInteger(m.now)
}
