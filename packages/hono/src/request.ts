import type { Framework } from '@tollgate/core/adapter'
import type { Context } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'

/**
 * How the kit reads a Hono context: the client's address from `getConnInfo` when given, else as
 * `defaultAddress` finds it; the user where Hono auth middleware usually leaves it,
 * `c.get('user')`.
 */
export function hono(getConnInfo: GetConnInfo | undefined): Framework<Context> {
  return {
    name: 'Hono',
    method: (c) => c.req.method,
    // Hono decodes its path with decodeURI, which turns an encoded backslash (%5C) into a raw
    // one, a separator to the rules' path matching; the URL the runtime parsed holds no raw
    // backslash, so a path with one is read from the URL instead (no slice per request else).
    path: (c) => {
      const path = c.req.path
      return path.includes('\\') ? c.req.url : path
    },
    socketAddress:
      getConnInfo === undefined ? defaultAddress : (c) => getConnInfo(c).remote.address,
    header: (c, name) => c.req.header(name),
    user: (c) => c.get('user' as never),
    hooks: ['getConnInfo'],
    // On @hono/node-server, the Node request the Request was built from.
    incoming: (c) => (c.env as RuntimeEnv | undefined)?.incoming,
    disconnected: (c) => c.req.raw.signal,
  }
}

/** What the runtimes put in `c.env` (the fetch handler's second argument). */
type RuntimeEnv = {
  /** @hono/node-server: the Node request (or, with `server`, the bindings hold it). */
  readonly incoming?: {
    readonly socket?: { readonly remoteAddress?: string }
    readonly rawHeaders?: readonly string[]
  }
  readonly server?: {
    readonly incoming?: { readonly socket?: { readonly remoteAddress?: string } }
  }
  /** Bun: the server. */
  readonly requestIP?: (request: Request) => { readonly address?: string } | null
  /** Deno: `Deno.serve`'s handler info. */
  readonly remoteAddr?: { readonly hostname?: string }
}

/**
 * The client's address on the runtimes Hono usually runs on, without importing any of them:
 * Node (@hono/node-server), Bun, Deno, and Cloudflare Workers, whose `CF-Connecting-IP` is read
 * only when the request carries Cloudflare's `cf` object (elsewhere any client could send that
 * header). Pass `getConnInfo` for any other runtime.
 */
function defaultAddress(c: Context): string | undefined {
  // Optional chaining, not a test of `env` first: it is undefined or null off the runtimes above.
  const env = c.env as RuntimeEnv | null | undefined
  const incoming = env?.incoming ?? env?.server?.incoming
  if (incoming !== undefined) return incoming.socket?.remoteAddress
  if (typeof env?.requestIP === 'function') return env.requestIP(c.req.raw)?.address
  if (env?.remoteAddr !== undefined) return env.remoteAddr.hostname
  const raw = c.req.raw as Request & { readonly cf?: unknown }
  // `header(name)` gives undefined, not null, for a field the request lacks.
  return raw.cf === undefined ? undefined : c.req.header('cf-connecting-ip')
}
