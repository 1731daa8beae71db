// One hot key, decided by the Redis store as it is and behind leasedStore, side by side in one
// run: decisions/s, latency, and Redis calls per decision, at 64 and 1 requests in flight.
// Rounds interleave the subjects; figures are medians, with each ratio's spread over rounds.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-lease
//   BENCH_ROUNDS=7 BENCH_OPS=100000 pnpm --filter @tollgate/benchmarks bench:redis-lease

import { fixedWindow, tokenBucket } from '@tollgate/core'
import type { Algorithm, Charge, Store } from '@tollgate/core/store'
import { ioredisClient, leasedStore, redisStore } from '@tollgate/redis'
import type { Redis } from 'ioredis'
import { clear, connect, median, runLoad } from './measure.js'
import { benchmarkRedis } from './own-server.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
// REDIS_URL measures that server as it is; by default, an empty server of the benchmark's own.
const redisServer = await benchmarkRedis()
const REDIS_URL = redisServer.url
const ROUNDS = env('BENCH_ROUNDS', 5)
const OPS = { 64: env('BENCH_OPS', 40_000), 1: env('BENCH_OPS_1', 5_000) } as const
const PREFIX = `bench:lease:${process.pid}`
// High enough that every request of a run is admitted: the benchmark measures the admitted path.
const LIMIT = 100_000_000

const RULES: readonly { readonly name: string; readonly algorithm: Algorithm }[] = [
  { name: 'fixed_window', algorithm: fixedWindow({ limit: LIMIT, windowMs: 60_000 }) },
  { name: 'token_bucket', algorithm: tokenBucket({ rate: LIMIT, periodMs: 60_000, burst: LIMIT }) },
]

/** `maxShare` undefined: no leases. */
type Subject = { readonly name: string; readonly maxShare?: number }
// The default share lets a hot key's leases grow past a whole run; leases of at most 100 units
// show what a small share costs (one call per 100 decisions at most).
const SUBJECTS: readonly Subject[] = [
  { name: 'redisStore' },
  { name: 'leasedStore', maxShare: 0.1 },
  { name: 'leasedStore, leases ≤ 100', maxShare: 100 / LIMIT },
]

const overBudget = { calls: 0 }

type Run = { rate: number; p50Ms: number; p99Ms: number; callsPerDecision: number }

async function measure(
  rule: (typeof RULES)[number],
  subject: Subject,
  inFlight: 1 | 64,
  round: number,
): Promise<Run> {
  const redis = await connect(REDIS_URL, false)
  const prefix = `${PREFIX}:${round}:${inFlight}:${rule.name}:${subject.maxShare ?? 0}`
  try {
    // The store's default options; the lease's too (1 s, up to a tenth of the limit).
    const redisSide = redisStore({ client: ioredisClient(redis), prefix })
    const counted = countCalls(redisSide)
    const store: Store =
      subject.maxShare === undefined
        ? counted.store
        : leasedStore(counted.store, {
            rules: [{ id: 'hot', algorithm: rule.algorithm.name }],
            maxShare: subject.maxShare,
          })
    const charge: Charge = {
      rule: 'hot',
      algorithm: rule.algorithm,
      key: 'tenant:hot',
      cost: 1,
      shadow: false,
    }
    const decide = async () => {
      try {
        const outcome = await store.consume([charge], Date.now())
        return outcome.decisions[0]!.allowed
      } catch (error) {
        // Over the store's default 250 ms budget (a loaded machine): counted, and admitted as
        // a fail-open rule would, rather than waited for.
        if ((error as { code?: unknown }).code !== 'ERR_RL_STORE_UNAVAILABLE') throw error
        overBudget.calls++
        return true
      }
    }
    await runLoad(decide, new Array(1000).fill('hot'), inFlight) // warm-up, scripts loaded
    const before = counted.calls()
    const ops = OPS[inFlight]
    const load = await runLoad(decide, new Array(ops).fill('hot'), inFlight)
    if ('close' in store) await (store as { close(): Promise<void> }).close()
    return { ...load, callsPerDecision: (counted.calls() - before) / ops }
  } finally {
    await clear(redis, prefix)
    redis.disconnect()
  }
}

/** Counts the consume calls that reach Redis. */
function countCalls(store: Store) {
  let calls = 0
  return {
    calls: () => calls,
    store: {
      timeoutMs: store.timeoutMs,
      consume(charges, now) {
        calls++
        return store.consume(charges, now)
      },
      refund: (charges, chargedAt, now) => store.refund(charges, chargedAt, now),
    } satisfies Store,
  }
}

async function main(): Promise<void> {
  const runs = new Map<string, Run[]>()
  const id = (rule: string, subject: string, inFlight: number) => `${rule}|${subject}|${inFlight}`
  for (let round = 0; round < ROUNDS; round++) {
    for (const inFlight of [64, 1] as const) {
      for (const rule of RULES) {
        // Alternate the order, so that no subject always meets a warmer machine.
        const order = round % 2 === 0 ? SUBJECTS : [...SUBJECTS].reverse()
        for (const subject of order) {
          const run = await measure(rule, subject, inFlight, round)
          const key = id(rule.name, subject.name, inFlight)
          runs.set(key, [...(runs.get(key) ?? []), run])
        }
      }
    }
  }
  const admin: Redis = await connect(REDIS_URL, false)
  const version = ((await admin.info('server')) as string).match(/redis_version:(\S+)/)?.[1]
  admin.disconnect()
  const leasedSubjects = SUBJECTS.slice(1)
  const lines = [
    `Redis ${version}, ioredis 6, one hot key, ${ROUNDS} rounds (medians; the spread is the lowest–highest per-round ratio), ${OPS[64].toLocaleString('en-US')} decisions per run at 64 in flight and ${OPS[1].toLocaleString('en-US')} at 1.`,
    '',
    '| rule | in flight | subject | decisions/s | p50 / p99 ms | × redisStore (spread) | Redis calls per decision |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
  ]
  for (const inFlight of [64, 1] as const) {
    for (const rule of RULES) {
      const plain = runs.get(id(rule.name, SUBJECTS[0]!.name, inFlight))!
      for (const subject of SUBJECTS) {
        const measured = runs.get(id(rule.name, subject.name, inFlight))!
        const ratios = measured.map((run, i) => run.rate / plain[i]!.rate)
        const ratio = leasedSubjects.includes(subject)
          ? `${median(ratios).toFixed(1)} (${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)})`
          : '1'
        lines.push(
          `| ${rule.name} | ${inFlight} | ${subject.name} | ${Math.round(median(measured.map((r) => r.rate))).toLocaleString('en-US')} | ${median(measured.map((r) => r.p50Ms)).toFixed(3)} / ${median(measured.map((r) => r.p99Ms)).toFixed(3)} | ${ratio} | ${median(measured.map((r) => r.callsPerDecision)).toFixed(4)} |`,
        )
      }
    }
  }
  lines.push(
    '',
    `Calls over the store's default 250 ms budget (admitted, as fail-open): ${overBudget.calls}.`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
}

try {
  await main()
} finally {
  await redisServer.stop()
}
