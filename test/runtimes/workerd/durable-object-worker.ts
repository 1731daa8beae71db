/**
 * A Hono Worker on the Durable Object store, built on its first request from `c.env` (the other
 * way to reach a binding than `cloudflare:workers`). LIMITER is bound to `TollgateLimiter`,
 * BROKEN to an object that fails every request; the store's subrequests are counted.
 */
import { durableObjectStore, type LimiterNamespace } from '@tollgate/cloudflare'
import { type RuleConfig, rateLimit } from '@tollgate/hono'
import { Hono, type MiddlewareHandler } from 'hono'

export { TollgateLimiter } from '@tollgate/cloudflare'

/** An object that cannot decide: every request fails, as one whose code throws would. */
export class BrokenLimiter {
  fetch(): Response {
    throw new Error('the object failed')
  }
}

type Env = { LIMITER: LimiterNamespace<unknown>; BROKEN: LimiterNamespace<unknown> }

let subrequests = 0

/** `namespace` with each stub it hands out counted: one per subrequest the store makes. */
const counted = (namespace: LimiterNamespace<unknown>): LimiterNamespace<unknown> => ({
  idFromName: (name) => namespace.idFromName(name),
  get: (id) => {
    subrequests++
    return namespace.get(id)
  },
})

const perIp = (id: string, onStoreError: 'open' | 'closed'): RuleConfig => ({
  id,
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  period: '1m',
  burst: 3,
  onStoreError,
})

const RULES: readonly RuleConfig[] = [
  perIp('per-ip', 'closed'),
  {
    id: 'daily',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 100,
    window: '1d',
    onStoreError: 'closed',
  },
]

const middlewares = new Map<string, MiddlewareHandler>()

/** The middleware of `name`, built once with the binding `binding` of the first request. */
function limited(name: string, rules: readonly RuleConfig[], binding: keyof Env) {
  return (c: { env: Env }, next: () => Promise<void>) => {
    let middleware = middlewares.get(name)
    if (middleware === undefined) {
      const store = durableObjectStore(counted(c.env[binding]), { prefix: `${name}:` })
      middleware = rateLimit(rules, { store })
      middlewares.set(name, middleware)
    }
    return middleware(c as never, next)
  }
}

const app = new Hono<{ Bindings: Env }>()
app.get('/subrequests', (c) => c.text(String(subrequests)))
app.use('/two-rules', limited('two-rules', RULES, 'LIMITER'))
app.use('/broken-open', limited('broken-open', [perIp('per-ip', 'open')], 'BROKEN'))
app.use('/broken-closed', limited('broken-closed', [perIp('per-ip', 'closed')], 'BROKEN'))
app.get('*', (c) => c.text('ok'))

export default app
