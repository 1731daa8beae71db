// A gateway process for the multi-process tests: it builds a Redis store, waits for the go of
// each scenario, sends its requests as fast as it can, and reports how many were admitted.
import {
  concurrency,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Algorithm, Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { LEASE_MS } from './gateways.js'
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
  | { readonly name: 'concurrency'; readonly limit: number }

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
  /** The store's layout (its `layout` option). @default 'identity', the store's own default */
  readonly layout?: 'rule' | 'identity'
  /**
   * Concurrency: each admitted request holds its slots while it counts itself in (INCR of the
   * key `probe`, whose highest value it reports), then gives them back (`release`), or keeps
   * them (`keep`: a process that will die holding them).
   */
  readonly hold?: { readonly probe: string; readonly afterwards: 'release' | 'keep' }
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
      /** With `hold`: the most requests this gateway saw counted in at once, across gateways. */
      readonly mostHeld: number
    }

const FACTORIES = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  leaky_queue: leakyQueue,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
  concurrency,
} as const

export function build(spec: AlgorithmSpec): Algorithm {
  // The factories refuse parameters they do not read: the spec's `name` is not one.
  const { name, ...params } = spec
  return (FACTORIES[name] as (params: object) => Algorithm)(params)
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
  // Leases are renewed at the scenario's caller time (none falls due while a scenario runs).
  let callerNow = 0
  const storesOf = (layout: 'rule' | 'identity') => ({
    caller: redisStore({
      client: target.client,
      prefix: config.prefix,
      time: 'caller',
      timeoutMs: 10_000,
      leaseMs: LEASE_MS,
      clock: { now: () => callerNow },
      layout,
    }),
    server: redisStore({
      client: target.client,
      prefix: config.prefix,
      timeoutMs: 10_000,
      leaseMs: LEASE_MS,
      layout,
    }),
  })
  const layouts = { rule: storesOf('rule'), identity: storesOf('identity') }
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
    const stores = layouts[scenario.layout ?? 'identity']
    const store = scenario.now === 'server' ? stores.server : stores.caller
    const now = scenario.now === 'server' ? 0 : scenario.now + config.index * (scenario.skewMs ?? 0)
    callerNow = now
    let next = 0
    let admitted = 0
    let errors = 0
    let mostHeld = 0
    const delays: number[] = []
    const slots = charges.filter((charge) => charge.algorithm.name === 'concurrency')
    const hold = async (at: number, probe: string, afterwards: 'release' | 'keep') => {
      const inside = Number(await target.command(probe, ['INCR', probe]))
      mostHeld = Math.max(mostHeld, inside)
      // A round trip more while counted in, so that requests overlap across gateways.
      await target.command(probe, ['GET', probe])
      if (afterwards === 'keep') return
      await target.command(probe, ['DECR', probe])
      // As the limiter's release: the slots alone come back.
      await store.refund(slots, at, now)
    }
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
              if (scenario.hold)
                await hold(outcome.at, scenario.hold.probe, scenario.hold.afterwards)
            }
          } catch {
            errors++
          }
        }
      }),
    )
    send({ scenario: message.go, admitted, errors, delays, mostHeld })
  })
  send({ ready: true })
}

await main()
