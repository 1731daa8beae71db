/**
 * What a reservation costs: a request reserved and then settled (two store calls: `decide` with
 * an estimate, `settle` with the actual cost) against one plain charge (`decide` alone), through
 * the limiter, on one token-bucket rule: on the memory store, then on the Redis store at
 * REDIS_URL (default redis://127.0.0.1:6379; its rows are left out when none answers).
 *
 *   pnpm --filter @tollgate/benchmarks bench:settle
 *
 * The machine is shared and noisy: the two are measured in alternating rounds within one process,
 * and the figure to read is their ratio in the same run (memory: CPU time; Redis: wall-clock
 * time, see redis.ts; the median of the rounds).
 */
import { createLimiter, type RuleConfig } from '@tollgate/core'
import { redisRows } from './redis.js'

const KEYS = 10_000
const PER_ROUND = 200_000
const ROUNDS = 7

const rule = (settle: boolean): RuleConfig => ({
  id: 'tokens',
  match: { identity: 'api_key' },
  algorithm: 'token_bucket',
  // Never refuses: the benchmark measures the path of an admission.
  rate: 1_000_000_000,
  burst: 1_000_000,
  cost: 500,
  ...(settle ? { settle: true } : {}),
})

const facts = Array.from({ length: KEYS }, (_, i) => ({
  method: 'POST',
  path: '/v1/chat',
  identities: { api_key: `k_${i}` },
}))

const plain = createLimiter({ rules: [rule(false)] })
const reserving = createLimiter({ rules: [rule(true)] })

function charge(count: number, offset: number): void {
  for (let i = 0; i < count; i++) plain.decide(facts[(i + offset) % KEYS]!)
}

function reserveAndSettle(count: number, offset: number): void {
  for (let i = 0; i < count; i++) {
    const verdict = reserving.decide(facts[(i + offset) % KEYS]!, { estimate: 800 })
    reserving.settle!(verdict as Exclude<typeof verdict, Promise<unknown>>, 300 + (i % 500))
  }
}

function reserveOnly(count: number, offset: number): void {
  for (let i = 0; i < count; i++) reserving.decide(facts[(i + offset) % KEYS]!, { estimate: 800 })
}

function cpuNsPer(run: (count: number, offset: number) => void, round: number): number {
  const start = process.cpuUsage()
  run(PER_ROUND, round * 7919)
  const used = process.cpuUsage(start)
  return ((used.user + used.system) * 1000) / PER_ROUND
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

// Warm-up: every key, and the JIT settled on both paths.
charge(KEYS * 5, 0)
reserveAndSettle(KEYS * 5, 0)
reserveOnly(KEYS * 5, 0)
const plainNs: number[] = []
const settleNs: number[] = []
const reserveNs: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  plainNs.push(cpuNsPer(charge, round))
  settleNs.push(cpuNsPer(reserveAndSettle, round))
  reserveNs.push(cpuNsPer(reserveOnly, round))
}
const result = {
  store: 'memory',
  plainChargeNs: Math.round(median(plainNs)),
  reserveAndSettleNs: Math.round(median(settleNs)),
  reserveOnlyNs: Math.round(median(reserveNs)),
  ratio: Number((median(settleNs) / median(plainNs)).toFixed(2)),
}
process.stdout.write(`${JSON.stringify(result)}\n`)
const { REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
const redis = await redisRows(REDIS_URL)
if (redis === undefined) process.stdout.write('Redis: none answered, its rows left out\n')
for (const row of redis ?? []) process.stdout.write(`${JSON.stringify(row)}\n`)
