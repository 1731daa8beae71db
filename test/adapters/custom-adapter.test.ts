// The adapter of docs/adapters/writing-an-adapter.md, for a plain fetch handler: the public core
// pieces are enough to write one.
import { createTollgate, type Handled, isPromise, type RuleConfig } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import { expect, it } from 'vitest'

function rateLimit(rules: readonly RuleConfig[], options = {}) {
  const gate = createTollgate(rules, options)
  return async function tollgate(request: Request, next: () => Promise<Response>) {
    const handled = gate.handle({
      method: request.method,
      path: new URL(request.url).pathname,
      identities: gate.identities.identities({
        socketAddress: '203.0.113.7',
        header: (name) => request.headers.get(name) ?? undefined,
        user: undefined,
      }),
    })
    const { response }: Handled = isPromise(handled) ? await handled : handled
    if (!response.allowed) {
      return new Response(response.body, {
        status: response.status,
        headers: response.headers.map(([name, value]): [string, string] => [name, value]),
      })
    }
    const answer = await next()
    for (const [name, value] of response.headers) answer.headers.append(name, value)
    return answer
  }
}

it('limits a fetch handler with the core alone', async () => {
  const clock = manualClock(0)
  const limit = rateLimit(
    [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 }],
    { clock },
  )
  const call = () => limit(new Request('http://api.test/v1/x'), async () => new Response('ok'))
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await call()).status)
  expect(statuses).toEqual([200, 200, 429])
  const denied = await call()
  expect(denied.headers.get('Retry-After')).toBe('1')
  expect(denied.headers.get('Content-Type')).toBe('application/problem+json')
  clock.advance(1000)
  const again = await call()
  expect(again.status).toBe(200)
  expect(again.headers.get('X-RateLimit-Remaining')).toBe('0')
})
