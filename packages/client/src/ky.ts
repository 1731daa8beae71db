import type { TollgateClient } from './client.js'
import type { Completion } from './send.js'

/**
 * ky hooks: each request waits as the client's `fetch` would (local limiter, learned policies)
 * and every response teaches the client. ky's own `retry` then does the retrying (it honours
 * Retry-After); or pass `fetch: client.fetch` to ky instead and set its `retry` to 0.
 * @example
 * const api = ky.create({ prefixUrl: 'https://api.example.com', hooks: kyHooks(client) })
 */
export function kyHooks(client: TollgateClient) {
  // ky hands afterResponse another Request object than beforeRequest, so prepared requests are
  // matched by method and URL, oldest first.
  const pending = new Map<string, Completion[]>()
  const keyOf = (request: Request) => `${request.method} ${request.url}`
  return {
    /** Waits as the client's `fetch` would before ky sends. */
    beforeRequest: [
      async (request: Request): Promise<void> => {
        const done = await client.prepare(request, request.signal)
        const key = keyOf(request)
        pending.set(key, [...(pending.get(key) ?? []), done])
      },
    ],
    /** Teaches the client each response's fields. */
    afterResponse: [
      (request: Request, _options: unknown, response: Response): void => {
        const key = keyOf(request)
        const queue = pending.get(key)
        queue?.shift()?.(response)
        if (queue?.length === 0) pending.delete(key)
      },
    ],
  }
}
