// A plain fetch handler limited with the adapter kit alone: the public kit entry is enough to
// write an adapter (docs/adapters/writing-an-adapter.md builds one for Fastify).
import type { RuleConfig } from '@tollgate/core'
import { createAdapterKit, type FieldSink, isPromise } from '@tollgate/core/adapter'
import { manualClock } from '@tollgate/test-utils'
import { expect, it } from 'vitest'

const appended: FieldSink<Headers> = {
  putEntries: (headers, entries) => {
    for (const [name, value] of entries) headers.append(name, value)
  },
  putVerdict: (headers, verdict, write) =>
    write(verdict, { write: (name, value) => headers.append(name, value) }),
}

function rateLimit(rules: readonly RuleConfig[], options = {}) {
  const kit = createAdapterKit<Request, undefined>(rules, options, {
    method: (request) => request.method,
    path: (request) => new URL(request.url).pathname,
    socketAddress: () => '203.0.113.7',
    header: (request, name) => request.headers.get(name) ?? undefined,
    user: () => undefined,
  })
  return async function tollgate(request: Request, next: () => Promise<Response>) {
    const entered = kit.enter(request, undefined)
    if (entered === undefined) return next()
    const exchange = isPromise(entered.ready) ? await entered.ready : entered.ready
    const headers = new Headers()
    exchange.writeFields(appended, headers)
    if (exchange.denial !== undefined)
      return new Response(exchange.denial.body, { status: exchange.denial.status, headers })
    const answer = await next()
    for (const [name, value] of headers) answer.headers.append(name, value)
    exchange.end(answer.status)
    return answer
  }
}

it('limits a fetch handler with the adapter kit alone', async () => {
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
  expect(again.headers.get('RateLimit')).toBe('"per-ip";r=0;t=2')
})
