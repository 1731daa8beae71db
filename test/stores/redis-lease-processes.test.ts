// Four OS processes lease one hot key from one Redis, on clocks the test moves in step. The
// counts are exact: Redis's own count is what the processes admitted plus what they hold, and
// what they admit never exceeds the bound (docs/concepts/redis.md#local-leases-for-hot-keys).
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { fixedWindow, tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  LeaseReport,
  LeaseRound,
  LeaseScenario,
  LeaseWorkerConfig,
} from './support/lease-worker.js'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'

const PROCESSES = 4
const workerPath = fileURLToPath(new URL('./support/lease-worker.ts', import.meta.url))
const START = 1_800_000_000_000 // a window boundary for every window used here
/** Keys expire on Redis's clock, which runs on while the processes' clocks stand still. */
const EXPIRY_MARGIN_MS = 600_000

type Processes = {
  round(round: LeaseRound): Promise<LeaseReport[]>
  close(): Promise<void>
}

async function startProcesses(
  prefix: string,
  scenarios: readonly LeaseScenario[],
): Promise<Processes> {
  const children: ChildProcess[] = []
  await Promise.all(
    Array.from({ length: PROCESSES }, (_, index) => {
      const config: LeaseWorkerConfig = {
        url: REDIS_URL,
        client: index % 2 === 0 ? 'ioredis' : 'node-redis',
        prefix,
        start: START,
        expiryMarginMs: EXPIRY_MARGIN_MS,
        scenarios,
      }
      const child = fork(workerPath, [JSON.stringify(config)], {
        execArgv: ['--conditions=@tollgate/source', '--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      })
      children.push(child)
      return new Promise<void>((resolve, reject) => {
        child.once('error', reject)
        child.once('message', () => resolve())
      })
    }),
  )
  return {
    round: (round) =>
      Promise.all(
        children.map(
          (child) =>
            new Promise<LeaseReport>((resolve) => {
              child.once('message', (report: LeaseReport) => resolve(report))
              child.send(round)
            }),
        ),
      ),
    close: () =>
      Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve()
              const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
              child.once('exit', () => {
                clearTimeout(timer)
                resolve()
              })
              child.send({ exit: true })
            }),
        ),
      ).then(() => undefined),
  }
}

const sum = (reports: readonly LeaseReport[], field: keyof LeaseReport) =>
  reports.reduce((total, report) => total + report[field], 0)

/** Units the processes hold in live leases (every request costs 1, so spent = local decisions). */
const held = (reports: readonly LeaseReport[]) =>
  sum(reports, 'grantedUnits') -
  sum(reports, 'localDecisions') -
  sum(reports, 'returnedUnits') -
  sum(reports, 'lapsedUnits')

const windowScenario = (ttlMs: number): LeaseScenario => ({
  rule: `hot-window-${ttlMs}`,
  algorithm: { name: 'fixed_window', limit: 1000, windowMs: 1000 },
  ttlMs,
  maxShare: 0.1,
})
const bucketScenario: LeaseScenario = {
  rule: 'hot-bucket',
  algorithm: { name: 'token_bucket', rate: 1000, periodMs: 1000, burst: 500 },
  ttlMs: 200,
  maxShare: 0.1,
}
const scenarios = [windowScenario(1000), windowScenario(250), bucketScenario]

describe.skipIf(!redisAvailable)(`${PROCESSES} processes leasing one hot key (one Redis)`, () => {
  const prefix = uniquePrefix('lease-procs')
  const redis = new Redis(REDIS_URL)
  let processes: Processes
  beforeAll(async () => {
    processes = await startProcesses(prefix, scenarios)
  }, 120_000)
  afterAll(async () => {
    await processes?.close()
    redis.disconnect()
    await removeTestKeys()
  })

  /** What Redis has left of a scenario's hot key at `now` (a cost-0 charge takes nothing). */
  async function remaining(index: number, now: number): Promise<number> {
    const scenario = scenarios[index]!
    const store = redisStore({
      client: ioredisClient(redis),
      prefix: `${prefix}:${scenario.rule}`,
      time: 'caller',
      expiryMarginMs: EXPIRY_MARGIN_MS,
    })
    // The factories refuse parameters they do not read: the scenario's `name` is not one.
    const { name, ...params } = scenario.algorithm
    const algorithm =
      name === 'fixed_window'
        ? fixedWindow(params as { limit: number; windowMs: number })
        : tokenBucket(params as { rate: number; periodMs: number; burst: number })
    const charge: Charge = {
      rule: scenario.rule,
      algorithm,
      key: 'tenant:hot',
      cost: 0,
      shadow: false,
    }
    const { decisions } = await store.consume([charge], now)
    return decisions[0]!.remaining
  }

  it.each([
    ['leases ending with the window', 0],
    ['leases given back 250 ms into the window', 1],
  ])(
    'fixed window, 1000 per s, %s: each window admits at most 1000, and Redis counts exactly what was admitted plus what is held',
    async (_label, index) => {
      let before: LeaseReport[] | undefined
      let windowAdmitted = 0
      const perWindow: number[] = []
      // Two windows of four rounds; demand 4 × 300 in most rounds, more than the window's 1000.
      for (let round = 0; round < 8; round++) {
        const now = START + round * 250
        if (round % 4 === 0 && round > 0) {
          perWindow.push(windowAdmitted)
          windowAdmitted = 0
        }
        const requests = round % 4 === 3 ? 50 : 300
        const reports = await processes.round({ scenario: index, now, requests, inFlight: 16 })
        expect(sum(reports, 'errors')).toBe(0)
        windowAdmitted +=
          sum(reports, 'admitted') - (before === undefined ? 0 : sum(before, 'admitted'))
        before = reports
        const counted = 1000 - (await remaining(index, now))
        // Exact: Redis's count is the window's admissions plus the units still leased.
        expect(counted).toBe(windowAdmitted + held(reports))
        expect(windowAdmitted).toBeLessThanOrEqual(1000)
      }
      perWindow.push(windowAdmitted)
      // The demand exceeds the limit: leasing leaves unused at most what the processes held.
      for (const admitted of perWindow) {
        expect(admitted).toBeGreaterThanOrEqual(1000 - PROCESSES * 100)
      }
      expect(sum(before!, 'localDecisions')).toBeGreaterThan(sum(before!, 'admitted') / 2)
    },
    120_000,
  )

  it('token bucket, burst 500, 1 per ms, leases of 200 ms: never more than the bucket allows, and exact counts', async () => {
    // One token a ms: the bucket allows 500 + d tokens in any span of d ms.
    const allows = (spanMs: number) => 500 + spanMs
    const admittedAt: { at: number; admitted: number }[] = []
    let before = 0
    for (let round = 0; round < 8; round++) {
      const now = START + round * 50
      const reports = await processes.round({ scenario: 2, now, requests: 150, inFlight: 16 })
      expect(sum(reports, 'errors')).toBe(0)
      const total = sum(reports, 'admitted')
      admittedAt.push({ at: now, admitted: total - before })
      before = total
      // The bucket ran dry in the first round and never filled up again: Redis granted exactly
      // its refill since, and every unit it granted is admitted, held or lapsed.
      const granted = allows(now - START) - (await remaining(2, now))
      expect(total + held(reports) + sum(reports, 'lapsedUnits')).toBe(granted)
      expect(total).toBeLessThanOrEqual(allows(now - START))
    }
    for (let i = 0; i < admittedAt.length; i++) {
      let span = 0
      for (let j = i; j < admittedAt.length; j++) {
        span += admittedAt[j]!.admitted
        const spanMs = admittedAt[j]!.at - admittedAt[i]!.at
        expect(span).toBeLessThanOrEqual(allows(spanMs + bucketScenario.ttlMs))
      }
    }
  }, 120_000)
})
