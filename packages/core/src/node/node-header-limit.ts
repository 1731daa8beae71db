/**
 * Whether Node may have dropped some of a request's header lines. Node keeps only the first
 * `server.maxHeadersCount` lines (1000 by default; 0 means no limit) and drops the rest without
 * a word, in `req.headers` and, past a chunk, in `req.rawHeaders` too. A client can then push
 * a trusted proxy's own `X-Forwarded-For` line out of the list with filler headers, and have its
 * own, earlier, line read instead. A list that reaches the limit may have been cut.
 *
 * For Node's `IncomingMessage` (Express's `req`, Koa's `ctx.req`, `c.env.incoming` on
 * @hono/node-server), read as a shape: core imports nothing from Node.
 */
export type NodeIncomingHeaders = {
  readonly rawHeaders: readonly string[]
  /** A `net.Socket`, whose `server` (not in Node's types) holds `maxHeadersCount`. */
  readonly socket?: object | null | undefined
}

type ServerSocket = { readonly server?: { readonly maxHeadersCount?: number | null } | null }

/** Node's `maxHeadersCount` when the server leaves it unset. */
export const NODE_DEFAULT_MAX_HEADERS_COUNT = 1000

/**
 * True when the header list reached the server's limit, so lines may have been dropped. False
 * without a request or its `rawHeaders` (not a Node request: nothing was cut).
 */
export function headerListMayBeCut(
  request: Partial<NodeIncomingHeaders> | null | undefined,
): boolean {
  const configured = (request?.socket as ServerSocket | null | undefined)?.server?.maxHeadersCount
  const limit = configured ?? NODE_DEFAULT_MAX_HEADERS_COUNT
  // rawHeaders holds a name and a value per line.
  return limit > 0 && (request?.rawHeaders?.length ?? 0) >= limit * 2
}
