// The store as built now beside the same package built from another commit, in one run, with
// INCR and rate-limit-redis: each configuration's rounds interleave every subject (the order
// reversed every other round), so load that comes and goes on a shared machine weighs on both.
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && pnpm install && pnpm build)
//   BEFORE=/tmp/before/packages/redis/dist/index.js REDIS_URL=redis://127.0.0.1:7300 \
//     pnpm --filter @tollgate/benchmarks bench:redis-before-after
//
// ROUNDS (3), OPS_64 (10,000), OPS_1 (1,500) and IN_FLIGHT (1 or 64: only that) change the run.
//
// With BEFORE_CORE (the other build's packages/core/dist/index.js) the subjects are the limiter
// path instead, `limiter.decide` over each build's store on its default options: one GCRA rule,
// three rules on the client IP in the store's default layout, and the same three in
// `layout: 'identity'` (ONLY, a regular expression, measures only the subjects it names).

import { pathToFileURL } from 'node:url'
import * as nowCore from '@tollgate/core'
import { fixedWindow, gcra, slidingWindow, tokenBucket } from '@tollgate/core'
import type { Algorithm, Charge } from '@tollgate/core/store'
import * as now from '@tollgate/redis'
import { connect, identities, median, runLoad } from './measure.js'
import { INCR, PEERS, type Subject } from './subjects.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const { REDIS_URL = 'redis://127.0.0.1:6379', BEFORE, IN_FLIGHT } = process.env
if (BEFORE === undefined) throw new Error('set BEFORE to the other build of @tollgate/redis')
const before = (await import(pathToFileURL(BEFORE).href)) as typeof now
const { BEFORE_CORE, ONLY } = process.env
const beforeCore =
  BEFORE_CORE === undefined
    ? undefined
    : ((await import(pathToFileURL(BEFORE_CORE).href)) as typeof nowCore)
const ROUNDS = env('ROUNDS', 3)
const OPS = { 1: env('OPS_1', 1500), 64: env('OPS_64', 10_000) }
const overBudget = new Map<string, number>()

/**
 * A Tollgate subject on the store's default options, over one build or the other: each request
 * charges every rule of `algorithms` on its identity, in `layout`.
 */
function tollgate(
  name: string,
  store: typeof now,
  algorithms: readonly Algorithm[],
  layout: 'rule' | 'identity' = 'rule',
): Subject {
  const prefix = `bench:ba:${name.replace(/\W/g, '')}`
  return {
    name,
    prefix,
    async setup(redis) {
      const limiter = store.redisStore({ client: store.ioredisClient(redis), prefix, layout })
      return async (identity) => {
        const charges: Charge[] = algorithms.map((algorithm, i) => ({
          rule: `r${i}`,
          algorithm,
          key: identity,
          cost: 1,
          shadow: false,
        }))
        try {
          return (await limiter.consume(charges, 0)).decisions.every((d) => d.allowed)
        } catch (error) {
          // Over the default 250 ms budget on a loaded machine: counted, as fail-open would admit.
          if ((error as { code?: unknown }).code !== 'ERR_RL_STORE_UNAVAILABLE') throw error
          overBudget.set(name, (overBudget.get(name) ?? 0) + 1)
          return true
        }
      }
    },
  }
}

const rate = { rate: 1_000_000, periodMs: 60_000, burst: 1_000_000 }
const algorithms: [string, Algorithm][] = [
  ['gcra', gcra(rate)],
  ['token_bucket', tokenBucket(rate)],
  ['fixed_window', fixedWindow({ limit: 1_000_000, windowMs: 60_000 })],
]
// The three rules of bench:redis's "3 rules, one key per identity".
const threeRules = [
  gcra(rate),
  tokenBucket(rate),
  slidingWindow({ limit: 1_000_000, windowMs: 60_000 }),
]
/**
 * `limiter.decide` over one build's core and store (the store's defaults but `layout` when
 * given): each request is an adapter's facts for one client IP, every rule keyed on it.
 */
function limiterSubject(
  name: string,
  core: typeof nowCore,
  store: typeof now,
  names: readonly ('gcra' | 'token_bucket' | 'sliding_window')[],
  layout?: 'rule' | 'identity',
): Subject {
  const prefix = `bench:ba:${name.replace(/\W/g, '')}`
  const rules = names.map((algorithm, i) =>
    algorithm === 'sliding_window'
      ? { id: `r${i}`, match: { identity: 'ip' }, algorithm, limit: 1_000_000, window: '1m' }
      : {
          id: `r${i}`,
          match: { identity: 'ip' },
          algorithm,
          rate: 1_000_000,
          period: '1m',
          burst: 1_000_000,
        },
  ) as unknown as Parameters<typeof core.createLimiter>[0]['rules']
  return {
    name,
    prefix,
    async setup(redis) {
      const options = { client: store.ioredisClient(redis), prefix }
      const limiter = core.createLimiter({
        rules,
        store: store.redisStore(layout === undefined ? options : { ...options, layout }),
        // Over the store's 250 ms budget on a loaded machine: counted, admitted as fail-open does.
        onError: () => overBudget.set(name, (overBudget.get(name) ?? 0) + 1),
      })
      return async (identity) => {
        const facts = { method: 'GET', path: '/', identities: { ip: identity.slice(3) } }
        return (await limiter.decide(facts)).allowed
      }
    },
  }
}

const three = ['gcra', 'token_bucket', 'sliding_window'] as const
const limiterSubjects = (label: string, core: typeof nowCore, store: typeof now): Subject[] => [
  limiterSubject(`limiter gcra${label}`, core, store, ['gcra']),
  limiterSubject(`limiter 3 rules, default layout${label}`, core, store, three),
  limiterSubject(`limiter 3 rules, layout identity${label}`, core, store, three, 'identity'),
]

const subjects: Subject[] = (
  beforeCore === undefined
    ? [
        INCR,
        PEERS[0]!,
        ...algorithms.flatMap(([name, algorithm]) => [
          tollgate(`tollgate ${name} (before)`, before, [algorithm]),
          tollgate(`tollgate ${name}`, now, [algorithm]),
        ]),
        tollgate('tollgate 3 rules, one key per identity (before)', before, threeRules, 'identity'),
        tollgate('tollgate 3 rules, one key per identity', now, threeRules, 'identity'),
      ]
    : [
        INCR,
        PEERS[0]!,
        ...limiterSubjects(' (before)', beforeCore, before),
        ...limiterSubjects('', nowCore, now),
      ]
).filter(
  (subject) =>
    ONLY === undefined ||
    subject === INCR ||
    subject === PEERS[0] ||
    new RegExp(ONLY).test(subject.name),
)
const configs = [
  { inFlight: 64, auto: false },
  { inFlight: 64, auto: true },
  { inFlight: 1, auto: false },
  { inFlight: 1, auto: true },
].filter((c) => IN_FLIGHT === undefined || c.inFlight === Number(IN_FLIGHT))

const results = new Map<string, { rate: number; p99: number; nodeUs: number }[]>()
for (let round = 0; round < ROUNDS; round++) {
  for (const config of configs) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const redis = await connect(REDIS_URL, config.auto)
      const decide = await subject.setup(redis)
      // Made before the warm-up, whose collections move them out of the young generation
      // (see run.ts).
      const ids = identities(100_000, OPS[config.inFlight as 1 | 64], round + 1)
      const warmUp = config.inFlight === 64 ? 10_000 : 2_000
      await runLoad(decide, identities(100_000, warmUp, 100 + round), config.inFlight)
      const cpu = process.cpuUsage()
      const load = await runLoad(decide, ids, config.inFlight)
      const { user, system } = process.cpuUsage(cpu)
      const nodeUs = (user + system) / ids.length
      const key = `${config.inFlight}-${config.auto}|${subject.name}`
      results.set(key, [...(results.get(key) ?? []), { rate: load.rate, p99: load.p99Ms, nodeUs }])
      redis.disconnect()
      process.stderr.write(`round ${round + 1} ${key} ${Math.round(load.rate)}/s\n`)
    }
  }
}

// Node's CPU per decision (this process, user + system) counts only time on a core: the steadier
// figure when other work on the machine stretches the wall clock.
console.log(
  '| configuration | subject | decisions/s | × INCR (median) | × INCR, each round | p99 ms | Node CPU µs per decision |',
)
console.log('| --- | --- | ---: | ---: | --- | ---: | ---: |')
for (const { inFlight, auto } of configs) {
  const floor = results.get(`${inFlight}-${auto}|${INCR.name}`)!
  for (const subject of subjects) {
    const runs = results.get(`${inFlight}-${auto}|${subject.name}`)!
    const ratios = runs.map((run, i) => run.rate / floor[i]!.rate)
    const cells = [
      `${inFlight} in flight${auto ? ', auto-pipelining' : ''}`,
      subject.name,
      Math.round(median(runs.map((run) => run.rate))).toLocaleString('en-US'),
      median(ratios).toFixed(2),
      ratios.map((ratio) => ratio.toFixed(2)).join(', '),
      median(runs.map((run) => run.p99)).toFixed(2),
      median(runs.map((run) => run.nodeUs)).toFixed(2),
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
}
console.log(`\nCalls over the 250 ms budget: ${JSON.stringify(Object.fromEntries(overBudget))}`)
