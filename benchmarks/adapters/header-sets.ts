// Tollgate against each peer with the same headers, for every set of headers the peer can send,
// with many clients: with a partition key where the peer's fields carry one (express-rate-limit's
// draft-8) and without where they do not (its draft-7 and draft-6, hono-rate-limiter's draft-7
// and draft-6, koa-ratelimit's X-RateLimit-*). koa-ratelimit and hono-rate-limiter have no field
// that carries a partition key. Each framework in one process, its variants' rounds interleaved;
// several runs, each ratio's median and its spread.
//
//   pnpm --filter @tollgate/benchmarks bench:adapters -- --header-sets --runs=3
//
// Options: --runs=3 --rounds=15 --requests=300 --clients=100000 --framework=express|koa|hono
// (each framework is best measured in a process of its own, as bench:adapters does: what one
// leaves in the heap weighs on the next)
import { rateLimit as expressLimit } from '@tollgate/express'
import { rateLimit as honoLimit } from '@tollgate/hono'
import { rateLimit as koaLimit } from '@tollgate/koa'
import type { RequestHandler } from 'express'
import type { MiddlewareHandler } from 'hono'
import type Koa from 'koa'
import { TOLLGATE_RULES } from './config.js'
import { addedOverBare, measureRounds, median, type Send } from './measure.js'
import { expressAppWith, expressPeer, expressSenderTo } from './targets/express.js'
import { getConnInfo, honoAppWith, honoPeer, honoSenderTo } from './targets/hono.js'
import { koaAppWith, koaPeer, koaSenderTo } from './targets/koa.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? ''] as const
  }),
)
const option = (name: string, fallback: number) => Number(args.get(name) ?? fallback)
const RUNS = option('runs', 3)
const ROUNDS = option('rounds', 15)
const PER_ROUND = option('requests', 300)
const CLIENTS = option('clients', 100_000)
const only = args.get('framework')?.toLowerCase()

/** One set of headers: what the peer is configured to send, and Tollgate set to send the same. */
type HeaderSet<Handler> = {
  readonly headers: string
  readonly partitionKey: boolean
  readonly tollgate: () => Handler
  readonly peer: () => Handler
}

const expressSender = (handler: RequestHandler | undefined): Send =>
  expressSenderTo(expressAppWith(handler), CLIENTS)

const EXPRESS: readonly HeaderSet<RequestHandler>[] = [
  {
    headers: 'draft-8 RateLimit fields and X-RateLimit-*',
    partitionKey: true,
    tollgate: () => expressLimit(TOLLGATE_RULES, { partitionKey: true, legacyHeaders: true }),
    peer: () => expressPeer('draft-8'),
  },
  {
    headers: 'draft-7 RateLimit fields and X-RateLimit-*',
    partitionKey: false,
    tollgate: () =>
      expressLimit(TOLLGATE_RULES, { standardHeaders: 'draft-7', legacyHeaders: true }),
    peer: () => expressPeer('draft-7'),
  },
  {
    headers: 'draft-6 RateLimit-* and X-RateLimit-*',
    partitionKey: false,
    tollgate: () =>
      expressLimit(TOLLGATE_RULES, { standardHeaders: 'draft-6', legacyHeaders: true }),
    peer: () => expressPeer('draft-6'),
  },
]

const koaSender = (handler: Koa.Middleware | undefined): Send =>
  koaSenderTo(koaAppWith(handler), CLIENTS)

const KOA: readonly HeaderSet<Koa.Middleware>[] = [
  {
    headers: 'X-RateLimit-*',
    partitionKey: false,
    tollgate: () => koaLimit(TOLLGATE_RULES, { standardHeaders: false, legacyHeaders: true }),
    peer: koaPeer,
  },
]

const honoSender = (handler: MiddlewareHandler | undefined): Send => {
  const send = honoSenderTo(honoAppWith(handler), CLIENTS)
  return () => Promise.resolve(send())
}

const honoSet = (draft: 'draft-6' | 'draft-7'): HeaderSet<MiddlewareHandler> => ({
  headers: draft === 'draft-7' ? 'draft-7 RateLimit fields' : 'draft-6 RateLimit-*',
  partitionKey: false,
  tollgate: () => honoLimit(TOLLGATE_RULES, { getConnInfo, standardHeaders: draft }),
  peer: () => honoPeer(draft),
})

const HONO: readonly HeaderSet<MiddlewareHandler>[] = [honoSet('draft-7'), honoSet('draft-6')]

type Row = {
  framework: string
  peer: string
  set: HeaderSet<unknown>
  /** Per run: CPU µs each adds per request over the bare app, and their ratio. */
  ours: number[]
  theirs: number[]
  ratios: number[]
}

async function measure<Handler>(
  framework: string,
  peer: string,
  sets: readonly HeaderSet<Handler>[],
  sender: (handler: Handler | undefined) => Send,
): Promise<Row[]> {
  if (only !== undefined && !framework.toLowerCase().startsWith(only)) return []
  const rows: Row[] = sets.map((set) => ({
    framework,
    peer,
    set,
    ours: [],
    theirs: [],
    ratios: [],
  }))
  for (let run = 0; run < RUNS; run++) {
    const variants = [{ name: 'bare', send: sender(undefined) }]
    sets.forEach((set, i) => {
      variants.push({ name: `tollgate ${i}`, send: sender(set.tollgate()) })
      variants.push({ name: `peer ${i}`, send: sender(set.peer()) })
    })
    const samples = await measureRounds(variants, {
      warmup: 2_000,
      rounds: ROUNDS,
      perRound: PER_ROUND,
    })
    sets.forEach((_, i) => {
      const ours = addedOverBare(samples, 'bare', `tollgate ${i}`)
      const theirs = addedOverBare(samples, 'bare', `peer ${i}`)
      rows[i]!.ours.push(ours)
      rows[i]!.theirs.push(theirs)
      rows[i]!.ratios.push(ours / theirs)
    })
  }
  return rows
}

const rows = [
  ...(await measure('Express 5', 'express-rate-limit', EXPRESS, expressSender)),
  ...(await measure('Koa 3', 'koa-ratelimit', KOA, koaSender)),
  ...(await measure('Hono 4', 'hono-rate-limiter', HONO, honoSender)),
]
console.log(
  `**${CLIENTS.toLocaleString('en-US')} client addresses in turn.** Node ${process.version}; ${RUNS} runs of ${ROUNDS} interleaved rounds × ${PER_ROUND} requests per variant.`,
)
console.log('')
console.log(
  '| framework | peer | headers (both send the same) | partition key | Tollgate (µs added) | peer (µs added) | Tollgate ÷ peer | each run |',
)
console.log('| --- | --- | --- | --- | ---: | ---: | ---: | --- |')
for (const { framework, peer, set, ours, theirs, ratios } of rows) {
  const each = ratios.map((r) => r.toFixed(2)).join(', ')
  const key = set.partitionKey ? 'yes' : 'no'
  console.log(
    `| ${framework} | ${peer} | ${set.headers} | ${key} | +${median(ours).toFixed(1)} | +${median(theirs).toFixed(1)} | ${median(ratios).toFixed(2)} | ${each} |`,
  )
}
