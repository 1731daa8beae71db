/**
 * One admitted request through Tollgate's own code, with the framework faked away: the adapter
 * kit's path (identities, decide, fields) and each adapter's middleware over a context whose
 * response keeps nothing.
 *
 * BENCH_CLIENTS: how many client addresses the requests come from, in turn (default 1: every
 * cache warm; 100000: the limiter meets each address again only after every other one).
 * BENCH_FIELDS: which fields the middlewares send: 'default' (X-RateLimit-* and the current
 * RateLimit fields), 'two' (the current ones alone), 'two, partition key' (with `pk`).
 */
import { createAdapterKit, type FieldSink, type Framework } from '@tollgate/core/adapter'
import { rateLimit as expressRateLimit } from '@tollgate/express'
import { rateLimit as honoRateLimit } from '@tollgate/hono'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { clientAddresses } from './clients.js'
import { TOLLGATE_RULES } from './config.js'

export type Step = () => unknown

export const RESOLVED = Promise.resolve()
const noHeader = () => undefined

const FIELDS = {
  default: {},
  two: { legacyHeaders: false },
  'two, partition key': { legacyHeaders: false, partitionKey: true },
} as const
const { BENCH_CLIENTS = '1', BENCH_FIELDS = 'default' } = process.env
const fieldsName = BENCH_FIELDS as keyof typeof FIELDS
const OPTIONS = FIELDS[fieldsName]
if (OPTIONS === undefined) {
  throw new Error(`BENCH_FIELDS: one of ${Object.keys(FIELDS).join(', ')}, got ${fieldsName}`)
}
const nextAddress = clientAddresses(Number(BENCH_CLIENTS))
/** The address of the request being made: each step takes the next one. */
let address = nextAddress()

// The kit, over a request that is a plain object: what every adapter asks of core per request.
type FakeRequest = { readonly method: string; readonly path: string }
const fakeFramework: Framework<FakeRequest> = {
  method: (req) => req.method,
  path: (req) => req.path,
  socketAddress: () => address,
  header: () => undefined,
  user: () => undefined,
}
const kit = createAdapterKit<FakeRequest, undefined>(TOLLGATE_RULES, OPTIONS, fakeFramework)
const fakeRequest: FakeRequest = { method: 'GET', path: '/' }
const discardFields = { write() {} }
const discard: FieldSink<undefined> = {
  putEntries() {},
  putVerdict: (_target, verdict, write) => write(verdict, discardFields),
}
// Decided alone, then with its fields written straight from the verdict, as adapters do. The
// memory store decides synchronously, so `enter` returns a decided exchange.
const coreStep: Step = () => {
  address = nextAddress()
  return kit.enter(fakeRequest, undefined)
}
const coreFieldsStep: Step = () => {
  address = nextAddress()
  const exchange = kit.enter(fakeRequest, undefined)
  exchange?.writeFields(discard, undefined)
  return exchange
}

// Koa: a context with a Node-like response that keeps nothing.
const fakeNodeResponse = {
  getHeaderNames: () => [] as string[],
  setHeader() {},
}
const koaMiddleware = koaRateLimit(TOLLGATE_RULES, OPTIONS)
const koaSocket = { remoteAddress: address }
const koaContext = {
  // Node's raw header list: the adapters check it for a list Node may have cut.
  req: { headers: {}, rawHeaders: [], socket: koaSocket },
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
  koaSocket.remoteAddress = nextAddress()
  const done = koaMiddleware(koaContext as never, () => RESOLVED)
  delete (koaContext as { onerror?: unknown }).onerror
  return done
}

// Express: the same response, and `next` called synchronously.
const expressMiddleware = expressRateLimit(TOLLGATE_RULES, OPTIONS)
const expressSocket = { remoteAddress: address }
const expressRequest = {
  headers: {},
  rawHeaders: [],
  socket: expressSocket,
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
const expressStep: Step = () => {
  expressSocket.remoteAddress = nextAddress()
  return expressMiddleware(expressRequest as never, expressResponse as never, () => {})
}

// Hono: a context whose finished response takes the fields and keeps nothing.
const honoMiddleware = honoRateLimit(TOLLGATE_RULES, {
  ...OPTIONS,
  getConnInfo: () => ({ remote: { address } }),
})
// Hono makes a context per request, and the middleware marks the one whose response carries
// its fields: each request gets a fresh one here too, of one class (the Context's 64 B or so
// are in the Hono figures; its request and response are shared, as they keep nothing).
const honoRequest = { method: 'GET', path: '/', header: noHeader, raw: {} }
const honoResponse = { status: 200, headers: { append() {}, set() {} } }
const noVariable = () => undefined
const noHeaderSet = () => {}
class FakeHonoContext {
  req = honoRequest
  env = undefined
  get = noVariable
  res = honoResponse
  header = noHeaderSet
}
const honoStep: Step = () => {
  address = nextAddress()
  return honoMiddleware(new FakeHonoContext() as never, () => RESOLVED)
}

export const steps = {
  core: coreStep,
  'core-fields': coreFieldsStep,
  koa: koaStep,
  hono: honoStep,
  express: expressStep,
}
