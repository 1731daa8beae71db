// What a request costs the gateway's JavaScript through `limiter.decide` and through the bare
// `store.consume`, Redis left out: the store talks to a client that answers every script call a
// microtask later with a canned "allowed" reply of the right shape, so the figure is the work of
// the limiter and the store per request (matching, keys, the call, the promise layers, reading
// the reply, the verdict), free of the socket and of Redis. CPU-bound in one thread, so steadier
// than wall-clock figures on a loaded machine; rounds interleave the subjects, the order
// reversed every other round. 64 requests in flight (batches form as against Redis) and 1.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-node-side -- --limiter
//
// ROUNDS (7) and OPS (40,000) change the run; BEFORE_CORE and BEFORE_REDIS (another build's
// dist/index.js of each) add its limiter beside this one.
import { pathToFileURL } from 'node:url'
import * as core from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import * as redis from '@tollgate/redis'
import { identities, median } from './measure.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const ROUNDS = env('ROUNDS', 7)
const OPS = env('OPS', 40_000)
const { BEFORE_CORE, BEFORE_REDIS } = process.env
const load = async <T>(file: string | undefined) =>
  file === undefined ? undefined : ((await import(pathToFileURL(file).href)) as T)
const beforeCore = await load<typeof core>(BEFORE_CORE)
const beforeRedis = await load<typeof redis>(BEFORE_REDIS)

type Decide = (identity: string) => Promise<boolean>
type Subject = { readonly name: string; readonly decide: Decide }

/**
 * Answers every script call a microtask later: the server's time, then for each cost sent (one
 * per rule and request, on the server's clock) what is left and the reset of a passing rule.
 */
function answeringClient(): redis.RedisScriptClient {
  const reply = (args: readonly string[]) => {
    const out = new Array<number>(1 + 2 * args.length)
    out[0] = 1_764_000_000_000
    for (let i = 0; i < args.length; i++) {
      out[1 + 2 * i] = 999_999
      out[2 + 2 * i] = 60_000
    }
    return Promise.resolve(out)
  }
  return {
    evalsha: (_sha, _keys, args) => reply(args),
    eval: (_source, _keys, args) => reply(args),
  }
}

const LIMIT = 1_000_000
type Name = 'gcra' | 'token_bucket' | 'sliding_window'
const ruleOf = (algorithm: Name, i: number) =>
  algorithm === 'sliding_window'
    ? { id: `r${i}`, match: { identity: 'ip' }, algorithm, limit: LIMIT, window: '1m' }
    : { id: `r${i}`, match: { identity: 'ip' }, algorithm, rate: LIMIT, period: '1m', burst: LIMIT }

function limiterSubject(
  name: string,
  c: typeof core,
  r: typeof redis,
  names: readonly Name[],
  layout: 'rule' | 'identity',
): Subject {
  const store = r.redisStore({ client: answeringClient(), layout })
  const rules = names.map(ruleOf) as unknown as Parameters<typeof c.createLimiter>[0]['rules']
  const limiter = c.createLimiter({ rules, store })
  return {
    name,
    async decide(identity) {
      const facts = { method: 'GET', path: '/', identities: { ip: identity.slice(3) } }
      return (await limiter.decide(facts)).allowed
    },
  }
}

function storeSubject(name: string, names: readonly Name[], layout: 'rule' | 'identity'): Subject {
  const store = redis.redisStore({ client: answeringClient(), layout })
  const algorithms = names.map((n) =>
    n === 'gcra'
      ? core.gcra({ rate: LIMIT, periodMs: 60_000, burst: LIMIT })
      : n === 'token_bucket'
        ? core.tokenBucket({ rate: LIMIT, periodMs: 60_000, burst: LIMIT })
        : core.slidingWindow({ limit: LIMIT, windowMs: 60_000 }),
  )
  return {
    name,
    async decide(identity) {
      const charges: Charge[] = algorithms.map((algorithm, i) => ({
        rule: `r${i}`,
        algorithm,
        key: identity,
        cost: 1,
        shadow: false,
      }))
      const outcome = await store.consume(charges, 0)
      return outcome.decisions.every((d) => d.allowed)
    },
  }
}

const three: Name[] = ['gcra', 'token_bucket', 'sliding_window']
const subjects: Subject[] = [
  storeSubject('store.consume, gcra', ['gcra'], 'identity'),
  storeSubject('store.consume, 3 rules, one key per identity', three, 'identity'),
]
for (const [label, c, r] of [
  ['', core, redis],
  [' (before)', beforeCore, beforeRedis],
] as const) {
  if (c === undefined || r === undefined) continue
  subjects.push(
    limiterSubject(`limiter.decide, gcra${label}`, c, r, ['gcra'], 'rule'),
    limiterSubject(`limiter.decide, 3 rules, a key per rule${label}`, c, r, three, 'rule'),
    limiterSubject(
      `limiter.decide, 3 rules, one key per identity${label}`,
      c,
      r,
      three,
      'identity',
    ),
  )
}

/** CPU µs per request over `ids`, `inFlight` outstanding at a time. */
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
  for (const inFlight of [64, 1]) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      await run(subject.decide, identities(100_000, 4_000, 100 + round), inFlight)
      const us = await run(subject.decide, identities(100_000, OPS, round + 1), inFlight)
      const key = `${inFlight}|${subject.name}`
      results.set(key, [...(results.get(key) ?? []), us])
    }
  }
}

console.log('| in flight | subject | CPU µs per request (median) | spread (min–max) |')
console.log('| ---: | --- | ---: | --- |')
for (const inFlight of [64, 1]) {
  for (const subject of subjects) {
    const runs = results.get(`${inFlight}|${subject.name}`)!
    const cells = [
      inFlight,
      subject.name,
      median(runs).toFixed(2),
      `${Math.min(...runs).toFixed(2)}–${Math.max(...runs).toFixed(2)}`,
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
}
