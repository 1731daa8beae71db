// What a partition key costs a Koa and a Hono request with many clients, taken apart: the same
// two fields (the current RateLimit and RateLimit-Policy) without `pk`, with `pk` hashed from
// each new client's key, and with `pk` from a function that returns one constant (the fields
// carry a `pk`, but nothing new is hashed). One process, every variant's rounds interleaved.
//
//   pnpm --filter @tollgate/benchmarks bench:adapters-partition-key
import { rateLimit as honoLimit } from '@tollgate/hono'
import { rateLimit as koaLimit } from '@tollgate/koa'
import { type Context, Hono } from 'hono'
import Koa from 'koa'
import { inject } from 'light-my-request'
import { clientAddresses } from './clients.js'
import { TOLLGATE_RULES } from './config.js'
import { addedOverBare, measureRounds, type Send } from './measure.js'

const CLIENTS = 100_000
type Options = { readonly legacyHeaders: false; readonly partitionKey?: true | (() => string) }

const clientOf = (c: Context) => (c.env as { address: string }).address
const getConnInfo = (c: Context) => ({ remote: { address: clientOf(c) } })

function honoSender(options: Options | undefined): Send {
  const app = new Hono()
  if (options !== undefined) app.use(honoLimit(TOLLGATE_RULES, { getConnInfo, ...options }))
  app.get('/', (c) => c.text('ok'))
  const address = clientAddresses(CLIENTS)
  return () => Promise.resolve(app.request('/', {}, { address: address() }))
}

function koaSender(options: Options | undefined): Send {
  const app = new Koa()
  if (options !== undefined) app.use(koaLimit(TOLLGATE_RULES, options))
  app.use((ctx) => {
    ctx.body = 'ok'
  })
  const handler = app.callback()
  const address = clientAddresses(CLIENTS)
  return () => inject(handler, { method: 'GET', url: '/', remoteAddress: address() })
}

const VARIANTS: ReadonlyArray<readonly [string, Options | undefined]> = [
  ['bare', undefined],
  ['two fields', { legacyHeaders: false }],
  ['two fields, partition key', { legacyHeaders: false, partitionKey: true }],
  ['two fields, one constant pk', { legacyHeaders: false, partitionKey: () => 'one' }],
]

console.log('| framework | variant | CPU µs added per request |\n| --- | --- | ---: |')
for (const [framework, sender] of [
  ['Koa 3', koaSender],
  ['Hono 4', honoSender],
] as const) {
  const variants = VARIANTS.map(([name, options]) => ({ name, send: sender(options) }))
  const samples = await measureRounds(variants, { warmup: 2_000, rounds: 15, perRound: 400 })
  for (const { name } of variants.slice(1)) {
    console.log(`| ${framework} | ${name} | +${addedOverBare(samples, 'bare', name).toFixed(2)} |`)
  }
}
