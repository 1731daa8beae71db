// A gateway process for the leasing test: a Redis store behind a leased store on a manual clock.
// The parent moves every process's clock to the same time, then each sends its requests as fast
// as it can and reports its counts.
import { fixedWindow, tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { leasedStore, redisStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import { ioredisTarget, nodeRedisTarget, type Target } from './targets.js'

export type LeaseScenario = {
  readonly rule: string
  readonly algorithm:
    | { readonly name: 'fixed_window'; readonly limit: number; readonly windowMs: number }
    | {
        readonly name: 'token_bucket'
        readonly rate: number
        readonly periodMs: number
        readonly burst: number
      }
  readonly ttlMs: number
  readonly maxShare: number
}

export type LeaseWorkerConfig = {
  readonly url: string
  readonly client: 'ioredis' | 'node-redis'
  readonly prefix: string
  readonly start: number
  /** Longer than a run: keys expire on Redis's clock, which runs on while the test's stands still. */
  readonly expiryMarginMs: number
  readonly scenarios: readonly LeaseScenario[]
}

/** The parent's orders: move a scenario's clock to `now`, then send `requests`, `inFlight` at a time. */
export type LeaseRound = {
  /** Which of the config's scenarios (each has its own clock, store and counts). */
  readonly scenario: number
  readonly now: number
  readonly requests: number
  readonly inFlight: number
}

/** Counts since the start: admitted requests and the leased store's units. */
export type LeaseReport = {
  readonly admitted: number
  readonly errors: number
  readonly localDecisions: number
  readonly grantedUnits: number
  readonly returnedUnits: number
  readonly lapsedUnits: number
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as LeaseWorkerConfig
  const target =
    config.client === 'ioredis'
      ? await ioredisTarget(config.url)
      : await nodeRedisTarget(config.url)
  const gateways = config.scenarios.map((scenario) => gateway(config, target, scenario))
  process.on('message', async (message: LeaseRound | { exit: true }) => {
    if ('exit' in message) {
      await Promise.all(gateways.map(({ store }) => store.close()))
      await target.close()
      process.exit(0)
    }
    const { time, store, charge, counts } = gateways[message.scenario]!
    await time.advance(message.now - time.now())
    await store.flush()
    let sent = 0
    await Promise.all(
      Array.from({ length: message.inFlight }, async () => {
        while (sent < message.requests) {
          sent++
          try {
            if ((await store.consume([charge], time.now())).decisions[0]!.allowed) counts.admitted++
          } catch {
            counts.errors++
          }
        }
      }),
    )
    const report: LeaseReport = { ...counts, ...store.stats() }
    process.send!(report)
  })
  process.send!({ ready: true })
}

/** One scenario's gateway: its own manual clock, leased store and counts. */
function gateway(config: LeaseWorkerConfig, target: Target, scenario: LeaseScenario) {
  // The factories refuse parameters they do not read: the scenario's `name` is not one.
  const { name, ...params } = scenario.algorithm
  const algorithm =
    name === 'fixed_window'
      ? fixedWindow(params as { limit: number; windowMs: number })
      : tokenBucket(params as { rate: number; periodMs: number; burst: number })
  const time = manualTime(config.start)
  const store = leasedStore(
    redisStore({
      client: target.client,
      prefix: `${config.prefix}:${scenario.rule}`,
      time: 'caller',
      timeoutMs: 10_000,
      expiryMarginMs: config.expiryMarginMs,
    }),
    {
      rules: [{ id: scenario.rule, algorithm: algorithm.name }],
      ttlMs: scenario.ttlMs,
      maxShare: scenario.maxShare,
      clock: time.clock,
      timers: time.timers,
    },
  )
  const charge: Charge = {
    rule: scenario.rule,
    algorithm,
    key: 'tenant:hot',
    cost: 1,
    shadow: false,
  }
  return { time, store, charge, counts: { admitted: 0, errors: 0 } }
}

await main()
