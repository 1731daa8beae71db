// One hot key, decided by the Redis store as it is and behind leasedStore, side by side in one
// run: decisions/s, latency, and Redis calls per decision, at 64 and 1 requests in flight.
// Rounds interleave the subjects; figures are medians, with each ratio's spread over rounds.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-lease
//   BENCH_ROUNDS=7 BENCH_OPS=100000 pnpm --filter @tollgate/benchmarks bench:redis-lease

import { type Algorithm, type Charge, fixedWindow, type Store, tokenBucket } from '@tollgate/core'
import { ioredisClient, leasedStore, redisStore } from '@tollgate/redis'
import type { Redis } from 'ioredis'
import { clear, connect, median, runLoad } from './measure.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const { REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
const ROUNDS = env('BENCH_ROUNDS', 5)
const OPS = { 64: env('BENCH_OPS', 40_000), 1: env('BENCH_OPS_1', 5_000) } as const
const PREFIX = `bench:lease:${process.pid}`
// High enough that every request of a run is admitted: the benchmark measures the admitted path.
const LIMIT = 100_000_000

const RULES: readonly { readonly name: string; readonly algorithm: Algorithm }[] = [
  { name: 'fixed_window', algorithm: fixedWindow({ limit: LIMIT, windowMs: 60_000 }) },
  { name: 'token_bucket', algorithm: tokenBucket({ rate: LIMIT, periodMs: 60_000, burst: LIMIT }) },
]

type Subject = { readonly name: string; readonly leased: boolean }
const SUBJECTS: readonly Subject[] = [
  { name: 'redisStore', leased: false },
  { name: 'leasedStore(redisStore)', leased: true },
]

type Run = { rate: number; p50Ms: number; p99Ms: number; callsPerDecision: number }

async function measure(
  rule: (typeof RULES)[number],
  subject: Subject,
  inFlight: 1 | 64,
  round: number,
): Promise<Run> {
  const redis = await connect(REDIS_URL, false)
  const prefix = `${PREFIX}:${round}:${inFlight}:${rule.name}:${subject.leased}`
  try {
    // The store's default options; the lease's too (1 s, up to a tenth of the limit).
    const redisSide = redisStore({ client: ioredisClient(redis), prefix })
    const counted = countCalls(redisSide)
    const store: Store = subject.leased
      ? leasedStore(counted.store, { rules: [{ id: 'hot', algorithm: rule.algorithm.name }] })
      : counted.store
    const charge: Charge = {
      rule: 'hot',
      algorithm: rule.algorithm,
      key: 'tenant:hot',
      cost: 1,
      shadow: false,
    }
    const decide = async () => {
      const outcome = await store.consume([charge], Date.now())
      return outcome.decisions[0]!.allowed
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
        // Alternate which subject goes first, so neither always meets a warmer machine.
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
  const lines = [
    `Redis ${version}, ioredis 6, one hot key, ${ROUNDS} rounds (medians; ratio spread = lowest–highest of the per-round ratios), ${OPS[64].toLocaleString('en-US')} decisions per run at 64 in flight and ${OPS[1].toLocaleString('en-US')} at 1.`,
    '',
    '| rule | in flight | redisStore decisions/s | p50 / p99 ms | leasedStore decisions/s | p50 / p99 ms | × redisStore (spread) | Redis calls per decision, leased |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const inFlight of [64, 1] as const) {
    for (const rule of RULES) {
      const plain = runs.get(id(rule.name, SUBJECTS[0]!.name, inFlight))!
      const leased = runs.get(id(rule.name, SUBJECTS[1]!.name, inFlight))!
      const ratios = leased.map((run, i) => run.rate / plain[i]!.rate)
      const cell = (rs: readonly Run[]) => [
        Math.round(median(rs.map((r) => r.rate))).toLocaleString('en-US'),
        `${median(rs.map((r) => r.p50Ms)).toFixed(3)} / ${median(rs.map((r) => r.p99Ms)).toFixed(3)}`,
      ]
      lines.push(
        `| ${rule.name} | ${inFlight} | ${cell(plain).join(' | ')} | ${cell(leased).join(' | ')} | ${median(ratios).toFixed(1)} (${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}) | ${median(leased.map((r) => r.callsPerDecision)).toFixed(4)} |`,
      )
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`)
}

await main()
