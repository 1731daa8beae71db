// Three gateway processes (Express) share a login limit through a Redis of the test's own,
// which is paused (SIGSTOP), then killed (kill -9) and restarted empty. While it fails, each
// gateway decides with a third of the limit (fallbackStore, instances counted by heartbeats in
// Redis); when it answers again, the local admissions are charged to it. Counts are exact: the
// gateways' clocks are the test's (windows and probes move when it says), calls to a hung Redis
// give up after their real deadline (timeoutMs), and nothing waits for time to pass.
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { fixedWindow, type RuleConfig } from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { type RedisServer, startRedisServer } from '@tollgate/test-utils/redis-server'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  FallbackGatewayCommand,
  FallbackGatewayConfig,
  FallbackGatewayStats,
} from './support/fallback-gateway.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'

const GATEWAYS = 3
const LIMIT = 300
const SHARE = LIMIT / GATEWAYS
const WINDOW_MS = 60_000
const START = 1_800_000_000_000 // a window boundary
const PROBE_MS = 1000
const rule: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: LIMIT,
  window: '1m',
  onStoreError: 'fallback',
}
const workerPath = fileURLToPath(new URL('./support/fallback-gateway.ts', import.meta.url))

type Gateway = { readonly child: ChildProcess; readonly port: number }

async function startGateway(config: FallbackGatewayConfig): Promise<Gateway> {
  const child = fork(workerPath, [JSON.stringify(config)], {
    execArgv: ['--conditions=@tollgate/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('message', (message: { port: number }) => resolve(message.port))
  })
  return { child, port }
}

function ask<T>(gateway: Gateway, command: FallbackGatewayCommand): Promise<T> {
  return new Promise<T>((resolve) => {
    gateway.child.once('message', (reply: T) => resolve(reply))
    gateway.child.send(command)
  })
}

type Load = { ok: number; limited: number; other: number; shares: number[]; retryAfter: boolean }

/** `total` requests spread round robin over `targets`, sequential per gateway, gateways at once. */
async function load(gateways: readonly Gateway[], total: number, targets: readonly number[]) {
  const result: Load = { ok: 0, limited: 0, other: 0, shares: [], retryAfter: true }
  await Promise.all(
    targets.map(async (target, t) => {
      const mine = Math.floor(total / targets.length) + (t < total % targets.length ? 1 : 0)
      for (let i = 0; i < mine; i++) {
        const response = await fetch(`http://127.0.0.1:${gateways[target]!.port}/api`)
        await response.arrayBuffer()
        if (response.status === 200) result.ok++
        else if (response.status === 429) {
          result.limited++
          if (response.headers.get('retry-after') === null) result.retryAfter = false
        } else result.other++
        const remaining = /r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]
        if (remaining !== undefined) result.shares.push(Number(remaining))
      }
    }),
  )
  return result
}

const ALL = Array.from({ length: GATEWAYS }, (_, i) => i)

describe.skipIf(!redisServerBinary)(`${GATEWAYS} gateways on a Redis that fails`, () => {
  const prefix = uniquePrefix('fallback')
  let server: RedisServer
  let gateways: Gateway[] = []
  let inspector: Redis
  const at = (now: number) => Promise.all(gateways.map((g) => ask(g, { now })))
  const ready = () => Promise.all(gateways.map((g) => ask(g, { ready: true })))
  const stats = () =>
    Promise.all(gateways.map((g) => ask<FallbackGatewayStats>(g, { stats: true })))
  /** What Redis has left of the login limit at `now` (a cost-0 charge takes nothing). */
  const redisRemaining = async (now: number) => {
    // Not the store under test: a deadline no loaded machine reaches (the default, 250 ms, can be).
    const store = redisStore({
      client: ioredisClient(inspector),
      prefix,
      time: 'caller',
      timeoutMs: 30_000,
    })
    const algorithm = fixedWindow({ limit: LIMIT, windowMs: WINDOW_MS })
    const charge = { rule: 'login', algorithm, key: 'ip:127.0.0.1', cost: 0, shadow: false }
    return (await store.consume([charge], now)).decisions[0]!.remaining
  }

  beforeAll(async () => {
    server = await startRedisServer()
    inspector = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 25 })
    const config = {
      url: server.url,
      prefix,
      rule,
      start: START,
      // Long enough that a call to the resumed server answers in time on a loaded machine; the
      // paused calls wait it out three times per gateway before the circuit opens.
      timeoutMs: 3000,
      probeIntervalMs: PROBE_MS,
    }
    gateways = await Promise.all(ALL.map(() => startGateway(config)))
    await ready()
    // Two heartbeat rounds: in the second, every gateway sees all three.
    await Promise.all(gateways.map((g) => ask(g, { beat: true })))
    const counts = await Promise.all(
      gateways.map((g) => ask<{ instances: number }>(g, { beat: true })),
    )
    expect(counts.map((c) => c.instances)).toEqual([3, 3, 3])
  }, 60_000)
  afterAll(async () => {
    for (const g of gateways) g.child.send({ exit: true })
    await Promise.all(gateways.map((g) => new Promise((resolve) => g.child.once('exit', resolve))))
    inspector?.disconnect()
    server?.resume()
    await server?.stop()
  })

  it('paused: each gateway admits its third, the store gets them back when it answers', async () => {
    expect(await load(gateways, 150, ALL)).toMatchObject({ ok: 150, limited: 0, other: 0 })

    await at(START + WINDOW_MS) // a window of its own for the outage
    server.pause()
    let started = performance.now()
    const paused = await load(gateways, 600, ALL)
    const pausedMs = performance.now() - started
    // Balanced load: exactly the limit, a third in each gateway; a 429 with Retry-After, no 500.
    expect(paused).toMatchObject({ ok: LIMIT, limited: 600 - LIMIT, other: 0, retryAfter: true })
    expect(Math.max(...paused.shares)).toBeLessThanOrEqual(SHARE - 1)
    expect((await stats()).map((s) => s.state)).toEqual(['open', 'open', 'open'])

    // Unbalanced: all of a window's requests on one gateway admit its third, never more.
    await at(START + 2 * WINDOW_MS)
    const skewed = await load(gateways, 300, [0])
    expect(skewed).toMatchObject({ ok: SHARE, limited: 300 - SHARE, other: 0 })

    server.resume()
    const resumed = START + 2 * WINDOW_MS + PROBE_MS
    await at(resumed)
    // Redis now runs what each gateway sent it while paused and gave up on: its three charges of
    // the outage's first window (and gateway 0's probe at cost 0). `ready()` waits until each
    // gateway's have run (a PING on its connection answers after them). Without it, Redis may
    // read a gateway's first probe (gateway 0's 100, in this window) before another gateway's
    // late charges, which would then count in this window too (a fixed window counts a charge
    // from the window before in its current one): 3 or 6 off the exact count. That is the
    // product's stricter slack for calls given up on (failure-modes.md, "The bound", and
    // packages/core/src/store/fallback/late-calls.test.ts); here the order is the test's, so
    // the late charges count in their own window, which has ended, and the count is exact.
    await ready()
    // The first probe on each gateway charges Redis its outage admissions (gateway 0's 100 of
    // this window); its request, and the rest until the next probe, are still decided locally,
    // and each is charged to Redis with the gateway's next request.
    started = performance.now()
    const first = await load(gateways, 6, ALL)
    // Gateway 0 spent its third of this window; gateways 1 and 2 admit 2 each of theirs.
    expect(first).toMatchObject({ ok: 4, limited: 2, other: 0 })
    expect((await stats()).map((s) => s.state)).toEqual(['confirming', 'confirming', 'confirming'])
    // Gateway 0's 100, and the first admission of gateways 1 and 2, charged by the second.
    expect(await redisRemaining(resumed)).toBe(LIMIT - SHARE - 2)
    await at(resumed + PROBE_MS)
    const back = await load(gateways, 60, ALL)
    const recoveryMs = performance.now() - started
    // Gateways 1 and 2 admitted 2 each while confirming, charged by the next probe.
    expect(back).toMatchObject({ ok: 60, other: 0 })
    const after = await stats()
    expect(after.map((s) => s.state)).toEqual(['closed', 'closed', 'closed'])
    expect(after.map((s) => s.outages)).toEqual(ALL.map(() => ['start', 'end']))
    // Exact: 100 on gateway 0 in the outage, 4 while confirming, then 60 decided by Redis.
    expect(await redisRemaining(resumed + PROBE_MS)).toBe(LIMIT - SHARE - 4 - 60)
    console.info(
      `[fallback] paused: 600 requests in ${pausedMs.toFixed(0)} ms, ${paused.ok} admitted; one gateway alone: ${skewed.ok}; resumed: 66 requests over two probes in ${recoveryMs.toFixed(0)} ms, Redis charged exactly`,
    )
  })

  it('killed and restarted empty: the outage is charged to the new server, no fresh allowance', async () => {
    const now = START + 10 * WINDOW_MS
    await at(now)
    await server.kill()
    let started = performance.now()
    const down = await load(gateways, 600, ALL)
    const downMs = performance.now() - started
    expect(down).toMatchObject({ ok: LIMIT, limited: 600 - LIMIT, other: 0, retryAfter: true })

    await server.restart()
    await at(now + PROBE_MS)
    await ready()
    started = performance.now()
    const first = await load(gateways, 6, ALL) // first probes: Redis charged the 300
    await at(now + 2 * PROBE_MS)
    const back = await load(gateways, 30, ALL)
    const recoveryMs = performance.now() - started
    // Redis restarted with nothing, but the gateways charged it the 300 they admitted.
    expect(first).toMatchObject({ ok: 0, limited: 6, other: 0 })
    expect(back).toMatchObject({ ok: 0, limited: 30, other: 0 })
    expect(await redisRemaining(now + 2 * PROBE_MS)).toBe(0)
    const after = await stats()
    expect(after.map((s) => s.state)).toEqual(['closed', 'closed', 'closed'])
    expect(after.map((s) => s.unhandled)).toEqual([0, 0, 0])
    console.info(
      `[fallback] killed: 600 requests in ${downMs.toFixed(0)} ms, ${down.ok} admitted; restarted: 36 requests over two probes in ${recoveryMs.toFixed(0)} ms, ${first.ok + back.ok} admitted (Redis charged ${LIMIT})`,
    )
  })
})
