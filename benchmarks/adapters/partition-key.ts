// What a partition key costs a Koa and a Hono request with many clients, taken apart: the same
// two fields (the current RateLimit and RateLimit-Policy) without `pk`, with `pk` hashed from
// each new client's key, and with `pk` from a function that returns one constant (the fields
// carry a `pk`, but nothing new is hashed). One process, every variant's rounds interleaved.
//
//   pnpm --filter @tollgate/benchmarks bench:adapters -- --partition-key
import { rateLimit as honoLimit } from '@tollgate/hono'
import { rateLimit as koaLimit } from '@tollgate/koa'
import { TOLLGATE_RULES } from './config.js'
import { addedOverBare, measureRounds, type Send } from './measure.js'
import { getConnInfo, honoAppWith, honoSenderTo } from './targets/hono.js'
import { koaAppWith, koaSenderTo } from './targets/koa.js'

const CLIENTS = 100_000
type Options = { readonly legacyHeaders: false; readonly partitionKey?: true | (() => string) }

function honoSender(options: Options | undefined): Send {
  const handler = options && honoLimit(TOLLGATE_RULES, { getConnInfo, ...options })
  const send = honoSenderTo(honoAppWith(handler), CLIENTS)
  return () => Promise.resolve(send())
}

const koaSender = (options: Options | undefined): Send =>
  koaSenderTo(koaAppWith(options && koaLimit(TOLLGATE_RULES, options)), CLIENTS)

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
