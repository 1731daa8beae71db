// What a decision costs on the JavaScript side, Redis left out: each subject talks to a client
// that answers every call in the next microtask with a canned reply of the right shape, so the
// figure is the store's own work per decision (building the call, the promise layers, the
// deadline, reading the reply), free of the socket and of Redis. CPU-bound in one thread, so
// much steadier than wall-clock figures on a loaded machine; rounds interleave the subjects and
// reverse their order every other round. One request in flight (the lone request's path) and 64.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-node-side   (node-side.ts runs this part)
//   BEFORE=<another build>/dist/index.js pnpm --filter @tollgate/benchmarks bench:redis-node-side
//
// ROUNDS (7) and OPS (40,000) change the run.
import { pathToFileURL } from 'node:url'
import { fixedWindow, gcra, tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import * as now from '@tollgate/redis'
import { RedisStore } from 'rate-limit-redis'
import { identities, median } from './measure.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const ROUNDS = env('ROUNDS', 7)
const OPS = env('OPS', 40_000)
const { BEFORE } = process.env
const before =
  BEFORE === undefined ? undefined : ((await import(pathToFileURL(BEFORE).href)) as typeof now)

type Decide = (identity: string) => Promise<boolean>
type Subject = { readonly name: string; readonly decide: Decide }

/**
 * A client whose every script call answers, a microtask later, "allowed" for each key: the
 * server's time, then for each key what is left and the reset (a passing rule's two integers).
 */
function answeringClient(): now.RedisScriptClient {
  const reply = (keys: readonly string[]) => {
    const out = new Array<number>(1 + 2 * keys.length)
    out[0] = 1_764_000_000_000
    for (let i = 0; i < keys.length; i++) {
      out[1 + 2 * i] = 999_999
      out[2 + 2 * i] = 60_000
    }
    return Promise.resolve(out)
  }
  return { evalsha: (_sha, keys) => reply(keys), eval: (_source, keys) => reply(keys) }
}

const rate = { rate: 1_000_000, periodMs: 60_000, burst: 1_000_000 }
const algorithms = [
  ['gcra', gcra(rate)],
  ['token_bucket', tokenBucket(rate)],
  ['fixed_window', fixedWindow({ limit: 1_000_000, windowMs: 60_000 })],
] as const

function tollgate(name: string, store: typeof now, algorithm: Charge['algorithm']): Subject {
  const limiter = store.redisStore({ client: answeringClient() })
  return {
    name,
    async decide(identity) {
      const charges: Charge[] = [{ rule: 'r0', algorithm, key: identity, cost: 1, shadow: false }]
      return (await limiter.consume(charges, 0)).decisions[0]!.allowed
    },
  }
}

function rateLimitRedis(): Subject {
  let hits = 0
  const store = new RedisStore({
    sendCommand: async (command: string) =>
      (command === 'SCRIPT' ? 'sha' : [++hits, 60_000]) as never,
  })
  store.init({ windowMs: 60_000 } as Parameters<RedisStore['init']>[0])
  return {
    name: 'rate-limit-redis',
    decide: async (id) => (await store.increment(id)).totalHits > 0,
  }
}

const subjects: Subject[] = [
  rateLimitRedis(),
  ...algorithms.flatMap(([name, algorithm]) => [
    ...(before ? [tollgate(`tollgate ${name} (before)`, before, algorithm)] : []),
    tollgate(`tollgate ${name}`, now, algorithm),
  ]),
]

/** CPU µs per decision over `ids`, `inFlight` outstanding at a time. */
async function run(decide: Decide, ids: readonly string[], inFlight: number): Promise<number> {
  let next = 0
  const cpu = process.cpuUsage()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ids.length) await decide(ids[next++]!)
    }),
  )
  const { user, system } = process.cpuUsage(cpu)
  return (user + system) / ids.length
}

const results = new Map<string, number[]>()
for (let round = 0; round < ROUNDS; round++) {
  for (const inFlight of [1, 64]) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      await run(subject.decide, identities(100_000, 2_000, 100 + round), inFlight)
      const us = await run(subject.decide, identities(100_000, OPS, round + 1), inFlight)
      const key = `${inFlight}|${subject.name}`
      results.set(key, [...(results.get(key) ?? []), us])
    }
  }
}

console.log(
  '| in flight | subject | CPU µs per decision (median) | each round | × rate-limit-redis |',
)
console.log('| ---: | --- | ---: | --- | ---: |')
for (const inFlight of [1, 64]) {
  const peer = median(results.get(`${inFlight}|rate-limit-redis`)!)
  for (const subject of subjects) {
    const runs = results.get(`${inFlight}|${subject.name}`)!
    const cells = [
      inFlight,
      subject.name,
      median(runs).toFixed(2),
      runs.map((us) => us.toFixed(2)).join(', '),
      (median(runs) / peer).toFixed(2),
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
}
