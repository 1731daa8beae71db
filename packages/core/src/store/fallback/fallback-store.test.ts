import { describe, expect, it } from 'vitest'
import { kitParts } from '../../adapter/parts.js'
import { BUILT_IN_ALGORITHMS } from '../../algorithms/table.js'
import { RateLimitError } from '../../errors.js'
import { composeLimiter, createLimiter } from '../../limiter/create-limiter.js'
import { clockReader } from '../../limiter/decide.js'
import { localFallback } from '../../limiter/fallback.js'
import { NO_ROUTES } from '../../limiter/no-routes.js'
import type { RuleConfig } from '../../rules/types.js'
import { memoryStore } from '../memory-store.js'
import type { Store } from '../types.js'
import { fallbackStore } from './fallback-store.js'
import type { FallbackStoreOptions } from './options.js'

// The fallback store over a shared store the test switches off and on, on the time the test
// passes to `decide`: the breaker and the shares run on it, so nothing waits.

function switchable() {
  const inner = memoryStore()
  const state = { down: false, calls: 0 }
  const fail = () => new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'connection refused')
  const store: Store = {
    consume: async (charges, now) => {
      state.calls++
      if (state.down) throw fail()
      return inner.consume(charges, now)
    },
    refund: async (charges, chargedAt, now) => {
      if (state.down) throw fail()
      inner.refund(charges, chargedAt, now)
    },
    timeoutMs: 250,
    shared: true,
  }
  return { store, state, inner }
}

const window100 = (onStoreError: RuleConfig['onStoreError'] = 'fallback', id = 'api') =>
  ({
    id,
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 100,
    window: '1m',
    onStoreError,
  }) as RuleConfig

const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }

function setup(rules: RuleConfig[], options: Partial<FallbackStoreOptions> = {}) {
  const shared = switchable()
  const lines: string[] = []
  const store = fallbackStore(shared.store, {
    instances: 4,
    logger: { warn: (line) => lines.push(line) },
    ...options,
  })
  const limiter = createLimiter({ rules, store, logger: false })
  const admitted = async (count: number, now: number) => {
    let passed = 0
    for (let i = 0; i < count; i++) if ((await limiter.decide(facts, { now })).allowed) passed++
    return passed
  }
  return { shared, store, limiter, lines, admitted }
}

describe('fallbackStore', () => {
  it('decides fallback rules locally with 1/instances of the allowance while the store fails', async () => {
    const { shared, limiter, admitted } = setup([window100()])
    shared.state.down = true
    const first = await limiter.decide(facts, { now: 0 })
    expect(first).toMatchObject({ allowed: true, storeFailed: false })
    expect(first.decisions[0]).toMatchObject({ degraded: true, limit: 25, remaining: 24 })
    expect(await admitted(100, 1)).toBe(24)
    const denied = await limiter.decide(facts, { now: 2 })
    expect(denied).toMatchObject({ allowed: false, reason: 'limit' })
    expect(denied.decisions[0]).toMatchObject({ degraded: true, limit: 25, remaining: 0 })
    expect(denied.decisions[0]!.retryAfterMs).toBe(60_000 - 2)
  })

  it('opens the circuit after `failures` failed calls, probes every probeIntervalMs, and returns once reconciled', async () => {
    const { shared, store, limiter, admitted, lines } = setup([window100()])
    shared.state.down = true
    await admitted(10, 0)
    expect(shared.state.calls).toBe(3) // three failures open the circuit
    expect(store.stats().state).toBe('open')
    await admitted(5, 999)
    expect(shared.state.calls).toBe(3)
    await admitted(5, 1000) // the first request is the probe, which fails
    expect(shared.state.calls).toBe(4)
    expect(store.stats().state).toBe('open')
    shared.state.down = false
    // The first probe charges the 20 local admissions, and its request is still decided here.
    const first = await limiter.decide(facts, { now: 2000 })
    expect(first.decisions[0]).toMatchObject({ degraded: true, remaining: 25 - 20 - 1 })
    expect(store.stats().state).toBe('confirming')
    await admitted(2, 2999) // local, until the next probe
    // Meanwhile each admission is charged to the store as the next request comes; the next
    // probe charges the last, then is decided by the store.
    const probe = await limiter.decide(facts, { now: 3000 })
    expect(probe.decisions[0]).toMatchObject({ limit: 100, remaining: 100 - 23 - 1 })
    expect(probe.decisions[0]!.degraded).toBeUndefined()
    // Charged in four calls: the 20 at the first probe, then each admission since as it came.
    expect(store.stats()).toMatchObject({ state: 'closed', outages: 1, reconciled: 4 })
    const after = await limiter.decide(facts, { now: 3001 })
    expect(after.decisions[0]).toMatchObject({ limit: 100, remaining: 75 })
    expect(after.decisions[0]!.degraded).toBeUndefined()
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/WARN_STORE_OUTAGE: .*1970-01-01T00:00:00.000Z.*1\/4/)
    expect(lines[1]).toMatch(
      /WARN_STORE_RECOVERED: .*1970-01-01T00:00:03.000Z, after an outage of 3000 ms.*23 requests decided locally, charged to it in 4 calls/,
    )
  })

  it('charges a key at most what it has left on recovery: spent, never in debt or in credit', async () => {
    const { shared, store, limiter, admitted } = setup([window100()], { instances: 1 })
    expect(await admitted(90, 0)).toBe(90)
    shared.state.down = true
    expect(await admitted(50, 1)).toBe(50) // a share of 100 locally: the window's start was not seen
    shared.state.down = false
    await admitted(1, 1001) // the first probe: charges the 50, decided here
    await admitted(1, 2001) // the last: the store has nothing left
    await store.reconciling()
    const after = await limiter.decide(facts, { now: 2002 })
    expect(after).toMatchObject({ allowed: false })
    expect(after.decisions[0]).toMatchObject({ limit: 100, remaining: 0 })
    expect(after.decisions[0]!.degraded).toBeUndefined()
  })

  it('drops what no longer counts: a fixed window that rolled over during the outage', async () => {
    const { shared, store, limiter, admitted } = setup([window100()])
    shared.state.down = true
    expect(await admitted(25, 0)).toBe(25)
    expect(await admitted(5, 60_000)).toBe(5) // a new window, a new share
    shared.state.down = false
    await admitted(1, 61_000) // the first probe: charges the 5 (the 25 no longer count)
    await admitted(1, 62_000) // the last: charges the first probe's request, then its own
    await store.reconciling()
    const d = await limiter.decide(facts, { now: 62_001 })
    expect(d.decisions[0]).toMatchObject({ limit: 100, remaining: 100 - 5 - 1 - 1 - 1 })
    expect(d.decisions[0]!.degraded).toBeUndefined()
  })

  it('keeps a rule that fails open or closed as it was, and decides the fallback one locally', async () => {
    const { shared, limiter } = setup([window100('fallback', 'a'), window100('open', 'b')])
    shared.state.down = true
    const mixed = await limiter.decide(facts, { now: 0 })
    expect(mixed.allowed).toBe(true)
    expect(mixed.decisions.map((d) => [d.rule, d.degraded])).toEqual([['a', true]])
    const closed = setup([window100('fallback', 'a'), window100('closed', 'c')])
    closed.shared.state.down = true
    expect(await closed.limiter.decide(facts, { now: 0 })).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
    })
  })

  it('reports the rules decided locally apart from those that passed, to onError or a warning', async () => {
    const rules = [window100('fallback', 'a'), window100('open', 'b')]
    const shared = switchable()
    shared.state.down = true
    const store = fallbackStore(shared.store, { instances: 4, logger: false })
    const lines: string[] = []
    const warned = createLimiter({ rules, store, logger: { warn: (line) => lines.push(line) } })
    await warned.decide(facts, { now: 0 })
    expect(lines).toEqual([
      '[tollgate] WARN_STORE_FAILED: store consume failed for b, a; a decided in this process (fallback): [tollgate] connection refused',
    ])
    const contexts: unknown[] = []
    const hooked = createLimiter({ rules, store, onError: (_, context) => contexts.push(context) })
    await hooked.decide(facts, { now: 0 })
    expect(contexts).toEqual([
      { operation: 'consume', rules: ['b'], failClosed: false, fallback: ['a'] },
    ])
  })

  it('refunds a local admission locally during the outage', async () => {
    const { shared, limiter } = setup([window100()])
    shared.state.down = true
    const verdict = await limiter.decide(facts, { now: 0 })
    await limiter.refund(verdict, { now: 1 })
    const next = await limiter.decide(facts, { now: 2 })
    expect(next.decisions[0]).toMatchObject({ degraded: true, remaining: 24 })
  })

  it('shares a token bucket: burst and rate divided, refill exact', async () => {
    const bucket = {
      id: 'tb',
      match: { identity: 'ip' },
      algorithm: 'token_bucket',
      rate: 40,
      period: '1s',
      burst: 80,
      onStoreError: 'fallback',
    } as RuleConfig
    const { shared, admitted } = setup([bucket])
    shared.state.down = true
    expect(await admitted(100, 0)).toBe(20)
    expect(await admitted(100, 1000)).toBe(10) // 40/s ÷ 4
  })

  it('charges a token bucket what was admitted within its fill time, at recovery', async () => {
    const slow = {
      id: 'tb',
      match: { identity: 'ip' },
      algorithm: 'token_bucket',
      rate: 4,
      period: '1s',
      burst: 80, // fills in 20 s; a share: burst 20, 1 per second
      onStoreError: 'fallback',
    } as RuleConfig
    const recent = setup([slow])
    recent.shared.state.down = true
    expect(await recent.admitted(30, 0)).toBe(20)
    recent.shared.state.down = false
    await recent.admitted(1, 1000) // charges the 20 at 1000: 80 − 20; its own request is local
    const back = await recent.limiter.decide(facts, { now: 2000 }) // + 4 refilled, − 1, − 1
    expect(back.decisions[0]).toMatchObject({ limit: 80, remaining: 62 })
    expect(back.decisions[0]!.degraded).toBeUndefined()

    const old = setup([slow])
    old.shared.state.down = true
    expect(await old.admitted(30, 0)).toBe(20)
    old.shared.state.down = false
    await old.admitted(1, 30_000) // 30 s on: the 20 would have refilled, nothing is charged
    const later = await old.limiter.decide(facts, { now: 31_000 })
    expect(later.decisions[0]).toMatchObject({ limit: 80, remaining: 78 })
  })

  it('decides a fallback rule locally in limiter.check too', async () => {
    const { shared, limiter } = setup([window100()])
    shared.state.down = true
    const decision = await limiter.check('ip:192.0.2.9', 'api', { now: 0 })
    expect(decision).toMatchObject({ allowed: true, degraded: true, limit: 25, remaining: 24 })
  })

  it('reads the instance count when an outage starts and keeps it through it', async () => {
    let count = 2
    const { shared, admitted } = setup([window100()], { instances: () => count })
    shared.state.down = true
    expect(await admitted(100, 0)).toBe(50)
    count = 5
    expect(await admitted(100, 60_000)).toBe(50)
  })
})

describe('fallbackStore options and rules, refused at start-up', () => {
  it('refuses a fallback rule on a store that cannot decide locally, naming the rule', () => {
    expect(() => createLimiter({ rules: [window100()], store: memoryStore() })).toThrow(
      /rules "api" have onStoreError: 'fallback': wrap the store in fallbackStore/,
    )
  })

  it('refuses a fallback rule in a limiter composed without local fallback, naming the part', () => {
    const parts = {
      algorithms: BUILT_IN_ALGORITHMS,
      routes: NO_ROUTES,
      store: memoryStore,
      penalties: undefined,
      clock: clockReader,
    }
    const store = fallbackStore(switchable().store, { instances: () => 1 })
    expect(() => composeLimiter({ rules: [window100()], store }, parts)).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'localFallback',
        message:
          "[tollgate] localFallback: rules \"api\" have onStoreError: 'fallback', which needs localFallback in createRateLimit's parts",
      }),
    )
    // With the part, only the store is checked, as createLimiter checks it.
    const composed = { ...parts, localFallback }
    expect(() => composeLimiter({ rules: [window100()], store }, composed)).not.toThrow()
    expect(() => composeLimiter({ rules: [window100()], store: memoryStore() }, composed)).toThrow(
      /rules "api" have onStoreError: 'fallback': wrap the store in fallbackStore/,
    )
    expect(kitParts({ algorithms: BUILT_IN_ALGORITHMS, localFallback }).localFallback).toBe(
      localFallback,
    )
    expect(() =>
      kitParts({ algorithms: BUILT_IN_ALGORITHMS, localFallback: 'yes' as never }),
    ).toThrow(expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'localFallback' }))
  })

  it('refuses fallback for a concurrency or queue rule, naming the rule and field', () => {
    const rules = [
      {
        id: 'slots',
        match: { identity: 'ip' },
        algorithm: 'concurrency',
        limit: 3,
        onStoreError: 'fallback',
      },
    ]
    expect(() =>
      createLimiter({
        rules: rules as never,
        store: fallbackStore(memoryStore(), { instances: 1 }),
      }),
    ).toThrow(/slots.*onStoreError.*'fallback' is for rate and window rules, not concurrency/s)
  })

  it('refuses bad options, naming each', () => {
    const shared = memoryStore()
    expect(() => fallbackStore(shared, { instances: 0 })).toThrow(
      /fallbackStore\(\) instances: expected/,
    )
    expect(() => fallbackStore(shared, { instances: 2, probeIntervalMs: -1 })).toThrow(
      /probeIntervalMs/,
    )
    expect(() => fallbackStore(shared, { instances: 2, failures: 0 })).toThrow(/failures/)
    expect(() => fallbackStore(shared, { instances: 2, logger: 3 as never })).toThrow(/logger/)
    expect(() => fallbackStore(shared, { instances: 2, probeInterval: 5 } as never)).toThrow(
      /probeInterval/,
    )
  })
})
