// A gateway process for the multi-process tests: it builds a Redis store, waits for the go of
// each scenario, sends its requests as fast as it can, and reports how many were admitted.
import {
  type Algorithm,
  type Charge,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { redisStore } from '@tollgate/redis'
import {
  ioredisClusterTarget,
  ioredisTarget,
  nodeRedisClusterTarget,
  nodeRedisTarget,
  type Target,
} from './targets.js'

export type AlgorithmSpec =
  | {
      readonly name: 'token_bucket' | 'gcra' | 'leaky_bucket'
      readonly rate: number
      readonly periodMs: number
      readonly burst: number
    }
  | {
      readonly name: 'leaky_queue'
      readonly rate: number
      readonly periodMs: number
      readonly burst: number
    }
  | {
      readonly name: 'fixed_window' | 'sliding_log' | 'sliding_window'
      readonly limit: number
      readonly windowMs: number
    }

export type Scenario = {
  /** Rules charged together by every request, each with its own identity. */
  readonly rules: readonly {
    readonly id: string
    readonly key: string
    readonly algorithm: AlgorithmSpec
  }[]
  readonly attempts: number
  readonly inFlight: number
  /** A fixed caller time, or the Redis server's clock. */
  readonly now: number | 'server'
  /** With a caller time: gateway i's clock runs i × skewMs ahead of `now`. */
  readonly skewMs?: number
}

export type WorkerConfig = {
  readonly connection: { readonly url: string } | { readonly ports: readonly number[] }
  readonly client: 'ioredis' | 'node-redis'
  /** This gateway's place among them (0, 1, …). */
  readonly index: number
  readonly prefix: string
  readonly scenarios: readonly Scenario[]
}

export type WorkerMessage =
  | { readonly ready: true }
  | {
      readonly scenario: number
      readonly admitted: number
      readonly errors: number
      /** The first rule's delayMs of each admitted request (a queue's wait for its slot). */
      readonly delays: readonly number[]
    }

export function build(spec: AlgorithmSpec): Algorithm {
  switch (spec.name) {
    case 'token_bucket':
      return tokenBucket(spec)
    case 'gcra':
      return gcra(spec)
    case 'leaky_bucket':
      return leakyBucket(spec)
    case 'leaky_queue':
      return leakyQueue(spec)
    case 'fixed_window':
      return fixedWindow(spec)
    case 'sliding_log':
      return slidingLog(spec)
    case 'sliding_window':
      return slidingWindow(spec)
  }
}

async function connect(config: WorkerConfig): Promise<Target> {
  if ('url' in config.connection) {
    return config.client === 'ioredis'
      ? ioredisTarget(config.connection.url)
      : nodeRedisTarget(config.connection.url)
  }
  return config.client === 'ioredis'
    ? ioredisClusterTarget(config.connection.ports)
    : nodeRedisClusterTarget(config.connection.ports)
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as WorkerConfig
  const target = await connect(config)
  const send = (message: WorkerMessage) => process.send!(message)
  const stores = {
    caller: redisStore({
      client: target.client,
      prefix: config.prefix,
      time: 'caller',
      timeoutMs: 10_000,
    }),
    server: redisStore({ client: target.client, prefix: config.prefix, timeoutMs: 10_000 }),
  }
  process.on('message', async (message: { go: number } | { exit: true }) => {
    if ('exit' in message) {
      await target.close()
      process.exit(0)
    }
    const scenario = config.scenarios[message.go]!
    const charges: Charge[] = scenario.rules.map((rule) => ({
      rule: rule.id,
      algorithm: build(rule.algorithm),
      key: rule.key,
      cost: 1,
      shadow: false,
    }))
    const store = scenario.now === 'server' ? stores.server : stores.caller
    const now = scenario.now === 'server' ? 0 : scenario.now + config.index * (scenario.skewMs ?? 0)
    let next = 0
    let admitted = 0
    let errors = 0
    const delays: number[] = []
    await Promise.all(
      Array.from({ length: scenario.inFlight }, async () => {
        while (next < scenario.attempts) {
          next++
          try {
            const outcome = await store.consume(charges, now)
            if (outcome.decisions.every((d) => d.allowed)) {
              admitted++
              const delayMs = outcome.decisions[0]!.delayMs
              if (delayMs !== undefined) delays.push(delayMs)
            }
          } catch {
            errors++
          }
        }
      }),
    )
    send({ scenario: message.go, admitted, errors, delays })
  })
  send({ ready: true })
}

await main()
