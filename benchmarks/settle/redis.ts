/**
 * What a reservation costs on the Redis store: a request reserved and then settled (two script
 * calls, two round trips) against one plain charge (one call), through the limiter, on one
 * token-bucket rule, on the server's clock. Wall-clock time per request with 1 request in flight
 * (the latency a request sees) and with 32 (throughput, where the calls of one turn share
 * round trips and Redis's CPU bounds the rate). Rounds alternate the two; the figure to read is
 * their ratio in the same run, the median of the rounds.
 */
import { createLimiter, type RuleConfig } from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'

const KEYS = 10_000
const ROUNDS = 5
/** Requests per round, by requests in flight. */
const OPS: Readonly<Record<number, number>> = { 1: 2_000, 32: 20_000 }

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

type Request = (i: number) => Promise<void>

async function perRequestUs(request: Request, count: number, inFlight: number, offset: number) {
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await request((offset + next++) % KEYS)
    }),
  )
  return ((performance.now() - start) * 1000) / count
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

/** The Redis rows, or undefined when no Redis answers at `url`. */
export async function redisRows(url: string) {
  const connection = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await connection.connect()
  } catch {
    connection.disconnect()
    return undefined
  }
  const prefix = `tgbench:settle:${process.pid}`
  const store = () => redisStore({ client: ioredisClient(connection), prefix, timeoutMs: 5_000 })
  const plain = createLimiter({ rules: [rule(false)], store: store() })
  const reserving = createLimiter({ rules: [rule(true)], store: store() })
  const charge: Request = async (i) => {
    await plain.decide(facts[i]!)
  }
  const reserveAndSettle: Request = async (i) => {
    const verdict = await reserving.decide(facts[i]!, { estimate: 800 })
    await reserving.settle!(verdict, 300 + (i % 500))
  }
  try {
    const rows = []
    for (const inFlight of [1, 32]) {
      const count = OPS[inFlight]!
      // Warm-up: scripts loaded, keys made, the JIT settled on both paths.
      await perRequestUs(charge, count, inFlight, 0)
      await perRequestUs(reserveAndSettle, count, inFlight, 0)
      const plainUs: number[] = []
      const settleUs: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        plainUs.push(await perRequestUs(charge, count, inFlight, round * 7919))
        settleUs.push(await perRequestUs(reserveAndSettle, count, inFlight, round * 7919))
      }
      rows.push({
        store: 'redis',
        inFlight,
        plainChargeUs: Number(median(plainUs).toFixed(1)),
        reserveAndSettleUs: Number(median(settleUs).toFixed(1)),
        ratio: Number((median(settleUs) / median(plainUs)).toFixed(2)),
      })
    }
    return rows
  } finally {
    await removeKeys(connection, prefix)
    connection.disconnect()
  }
}

async function removeKeys(connection: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await connection.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await connection.unlink(...keys)
  } while (cursor !== '0')
}
