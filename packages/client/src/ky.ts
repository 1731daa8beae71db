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
  const pending = new WeakMap<Request, Completion>()
  return {
    beforeRequest: [
      async (request: Request): Promise<void> => {
        pending.set(request, await client.prepare(request, request.signal))
      },
    ],
    afterResponse: [
      (request: Request, _options: unknown, response: Response): void => {
        pending.get(request)?.(response)
        pending.delete(request)
      },
    ],
  }
}
