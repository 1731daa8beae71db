/**
 * One admitted request through Tollgate's own code, with the framework faked away: the adapter
 * kit's path (identities, decide, fields) and each adapter's middleware over a context whose
 * response keeps nothing.
 */
import { createAdapterKit, type FieldSink, type Framework } from '@tollgate/core/adapter'
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { TOLLGATE_RULES } from './config.js'

export type Step = () => unknown

export const RESOLVED = Promise.resolve()
const ADDRESS = '127.0.0.1'
const noHeader = () => undefined

// The kit, over a request that is a plain object: what every adapter asks of core per request.
type FakeRequest = { readonly method: string; readonly path: string }
const fakeFramework: Framework<FakeRequest> = {
  method: (req) => req.method,
  path: (req) => req.path,
  socketAddress: () => ADDRESS,
  header: () => undefined,
  user: () => undefined,
}
const kit = createAdapterKit<FakeRequest, undefined>(TOLLGATE_RULES, {}, fakeFramework)
const fakeRequest: FakeRequest = { method: 'GET', path: '/' }
const discardFields = { write() {} }
const discard: FieldSink<undefined> = {
  putEntries() {},
  putVerdict: (_target, verdict, write) => write(verdict, discardFields),
}
// Decided alone, then with its fields written straight from the verdict, as adapters do. The
// memory store decides synchronously, so `enter` returns a decided pass.
const coreStep: Step = () => kit.enter(fakeRequest, undefined)
const coreFieldsStep: Step = () => {
  const pass = kit.enter(fakeRequest, undefined)
  pass?.writeFields(discard, undefined)
  return pass
}

// Koa: a context with a Node-like response that keeps nothing.
const fakeNodeResponse = {
  getHeaderNames: () => [] as string[],
  setHeader() {},
}
const koaMiddleware = koaRateLimit(TOLLGATE_RULES)
const koaContext = {
  // Node's raw header list: the adapters check it for a list Node may have cut.
  req: { headers: {}, rawHeaders: [], socket: { remoteAddress: ADDRESS } },
  res: fakeNodeResponse,
  method: 'GET',
  originalUrl: '/',
  url: '/',
  state: {},
  status: 200,
  append() {},
}
// A real context lives for one request; the middleware puts its `onerror` on it, so it is taken
// off again (deleting the last property added rolls its shape back, allocating nothing).
const koaStep: Step = () => {
  const done = koaMiddleware(koaContext as never, () => RESOLVED)
  delete (koaContext as { onerror?: unknown }).onerror
  return done
}

// Express: the same response, and `next` called synchronously.
const expressMiddleware = expressRateLimit(TOLLGATE_RULES)
const expressRequest = {
  headers: {},
  rawHeaders: [],
  socket: { remoteAddress: ADDRESS },
  method: 'GET',
  originalUrl: '/',
  url: '/',
}
// Express sets X-Powered-By (on by default) before any middleware runs.
const expressResponse = {
  ...fakeNodeResponse,
  getHeaderNames: () => ['x-powered-by'],
  append() {},
  once() {},
  on() {},
}
const expressStep: Step = () =>
  expressMiddleware(expressRequest as never, expressResponse as never, () => {})

// Hono: a context whose finished response takes the fields and keeps nothing.
const honoMiddleware = honoRateLimit(TOLLGATE_RULES, {
  getConnInfo: () => ({ remote: { address: ADDRESS } }),
})
const honoContext = {
  req: { method: 'GET', path: '/', header: noHeader, raw: {} },
  env: undefined,
  get: () => undefined,
  res: { status: 200, headers: { append() {}, set() {} } },
  header() {},
}
// The middleware marks a context whose response carries its fields (a symbol of its own): taken
// off once the request is done, as Koa's `onerror` is, so that the next one writes afresh.
const honoStep: Step = () =>
  honoMiddleware(honoContext as never, () => RESOLVED).then(() => {
    for (const mark of Object.getOwnPropertySymbols(honoContext))
      delete (honoContext as Record<symbol, unknown>)[mark]
  })

export const steps = {
  core: coreStep,
  'core-fields': coreFieldsStep,
  koa: koaStep,
  hono: honoStep,
  express: expressStep,
}
