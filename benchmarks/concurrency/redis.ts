/**
 * Concurrency slots shared through Redis (leases): the round trips of a take and of a release,
 * and the time per request of take + release against an admitted token-bucket request, both one
 * rule through `limiter.decide` on the Redis store, one hot key each. The two run interleaved,
 * round after round, so that load from other processes falls on both alike.
 *   pnpm --filter @tollgate/benchmarks bench:concurrency -- --redis --rounds=7 --requests=4000
 * Uses REDIS_URL (default redis://127.0.0.1:6379) under a prefix of its own, removed at the end.
 */
import { createLimiter, type Limiter, type RuleConfig } from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { clear, connect, countWrites } from '../redis/measure.js'

const args = new Map(
  process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]),
)
const ROUNDS = Number(args.get('rounds') ?? 7)
const REQUESTS = Number(args.get('requests') ?? 4000)
const IN_FLIGHT = Number(args.get('in-flight') ?? 8)
const URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
const PREFIX = `tgbench:leases:${process.pid}`
const facts = { method: 'GET', path: '/reports/1', identities: { ip: '203.0.113.7' } }

const bucketRule: RuleConfig = {
  id: 'tb',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1_000_000_000,
  burst: 1_000_000_000,
}
const slotsRule: RuleConfig = { id: 'c', match: {}, algorithm: 'concurrency', limit: 10_000 }

async function limiterOf(rule: RuleConfig, autoPipelining: boolean) {
  const redis = await connect(URL, autoPipelining)
  const store = redisStore({ client: ioredisClient(redis), prefix: PREFIX, coalesce: false })
  return { redis, limiter: createLimiter({ rules: [rule], store, logger: false }) }
}

/** Socket writes (round trips, one request at a time, no auto-pipelining) per take and release. */
async function roundTrips(): Promise<{ take: number; release: number }> {
  const { redis, limiter } = await limiterOf(slotsRule, false)
  const writes = countWrites(redis)
  await limiter.release!(await limiter.decide(facts)) // scripts loaded
  const before = writes.writes
  const verdict = await limiter.decide(facts)
  const taken = writes.writes
  await limiter.release!(verdict)
  redis.disconnect()
  return { take: taken - before, release: writes.writes - taken }
}

/** Mean ms per request of `run` with IN_FLIGHT requests outstanding. */
async function msPerRequest(run: () => Promise<void>): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < REQUESTS) await run()
    }),
  )
  return (performance.now() - started) / REQUESTS
}

async function main(): Promise<void> {
  const trips = await roundTrips()
  const bucket = await limiterOf(bucketRule, true)
  const slots = await limiterOf(slotsRule, true)
  const admitted = async (limiter: Limiter) => {
    const verdict = await limiter.decide(facts)
    if (!verdict.allowed) throw new Error('denied')
    return verdict
  }
  const tokenBucket = async () => {
    await admitted(bucket.limiter)
  }
  const takeAndRelease = async () => {
    await slots.limiter.release!(await admitted(slots.limiter))
  }
  await msPerRequest(tokenBucket)
  await msPerRequest(takeAndRelease)
  const rows: { bucket: number; slots: number }[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0
    const first = await msPerRequest(order ? tokenBucket : takeAndRelease)
    const second = await msPerRequest(order ? takeAndRelease : tokenBucket)
    rows.push(order ? { bucket: first, slots: second } : { bucket: second, slots: first })
  }
  await clear(bucket.redis, PREFIX)
  bucket.redis.disconnect()
  slots.redis.disconnect()
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const ratios = rows.map((row) => row.slots / row.bucket)
  const show = (ms: number) => `${(ms * 1000).toFixed(1)} µs`
  console.log(`round trips: take ${trips.take}, release ${trips.release}`)
  console.log(`${ROUNDS} rounds of ${REQUESTS} requests, ${IN_FLIGHT} in flight, interleaved`)
  console.log(`token bucket, admitted:     median ${show(median(rows.map((r) => r.bucket)))}`)
  console.log(`concurrency take + release: median ${show(median(rows.map((r) => r.slots)))}`)
  console.log(
    `ratio: median ${median(ratios).toFixed(2)}×, rounds from ${Math.min(...ratios).toFixed(2)}× to ${Math.max(...ratios).toFixed(2)}×`,
  )
}

await main()
