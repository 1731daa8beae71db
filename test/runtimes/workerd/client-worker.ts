/**
 * A Worker that calls a Tollgate-limited origin through a service binding (`env.ORIGIN`) with
 * `@tollgate/client`, built at module scope as users write it. Bundled by client.test.ts for a
 * platform without Node built-ins.
 */
import { type ClientEvent, createClient, localLimiter } from '@tollgate/client'

type Env = { readonly ORIGIN: { fetch(request: Request): Promise<Response> } }

const events: ClientEvent[] = []
let origin: Env['ORIGIN'] | undefined
const client = createClient({
  fetch: (request) => origin!.fetch(request),
  retry: { maxTotalMs: 2000 },
  onEvent: (event) => events.push(event),
})
// A local budget far above the origin's: never waits here, but counts every call.
const budget = localLimiter({ algorithm: 'sliding_log', limit: 100, window: '1m' })

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    origin = env.ORIGIN
    const calls = Number(new URL(request.url).searchParams.get('calls') ?? '1')
    const statuses: number[] = []
    const retryAfter: Array<string | null> = []
    for (let i = 0; i < calls; i++) {
      budget.tryAcquire()
      const response = await client.fetch('https://origin.test/v1/quotes', {
        headers: { 'CF-Connecting-IP': '203.0.113.9' },
      })
      statuses.push(response.status)
      retryAfter.push(response.headers.get('retry-after'))
    }
    return Response.json({
      statuses,
      retryAfter,
      events,
      learned: client.learnedPolicies(),
      budgetLeftMs: budget.reserve(100),
    })
  },
}
