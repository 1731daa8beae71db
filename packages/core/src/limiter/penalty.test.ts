import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { kitParts } from '../adapter/parts.js'
import { fixedWindow } from '../algorithms/fixed-window.js'
import { slidingLog } from '../algorithms/sliding-log.js'
import { type AlgorithmState, step } from '../algorithms/step.js'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { tokenBucket } from '../algorithms/token-bucket.js'
import type { Algorithm } from '../algorithms/types.js'
import { defineRules } from '../rules/define-rules.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { composeLimiter, createLimiter } from './create-limiter.js'
import { clockReader } from './decide.js'
import { limiterOperations } from './operator.js'
import { penalties } from './penalised.js'
import { routeMatching } from './route-matching.js'
import { STORES } from './test-stores.js'
import type { KeyReport, Verdict } from './types.js'

/*
 * Penalties against an exact model: block lengths (block × factor^(n−1), capped), growth,
 * decay (offences forgotten forgetAfter after a block ends) and expiry of the rule's own state,
 * on a driven clock. The model keeps the algorithm's state through the pure `step`, and its own
 * record of offences, written from the documented rules, not from the store's code.
 */

type Params = { block: number; factor: number; maxBlock: number; forgetAfter: number }
type Remembered = { count: number; blockedUntil: number }
type Expected = {
  allowed: boolean
  reason: string | undefined
  retryAfterMs: number | undefined
  offences: number | undefined
  blockedUntil: number | undefined
}

/** The model: one client's algorithm state and offences; each request costs 1. */
function model(algorithm: Algorithm, p: Params) {
  let state: AlgorithmState | undefined
  let record: Remembered | undefined
  const decide = (now: number): Expected => {
    if (record !== undefined && now >= record.blockedUntil + p.forgetAfter) record = undefined
    const tried = step(algorithm, state, 1, now)
    if (record !== undefined && record.blockedUntil > now) {
      // Blocked: nothing charged; retry at the block's end or when the quota allows, if later.
      const quota = tried.decision.allowed ? 0 : tried.decision.retryAfterMs!
      const retryAfterMs = Math.max(record.blockedUntil - now, quota)
      return { allowed: false, reason: 'blocked', retryAfterMs, ...shown(record) }
    }
    if (tried.decision.allowed) {
      state = tried.state
      return { allowed: true, reason: undefined, retryAfterMs: undefined, ...shown(undefined) }
    }
    const count = (record?.count ?? 0) + 1
    const length = Math.min(p.maxBlock, p.block * p.factor ** (count - 1))
    record = { count, blockedUntil: now + length }
    const retryAfterMs = Math.max(length, tried.decision.retryAfterMs!)
    return { allowed: false, reason: 'blocked', retryAfterMs, ...shown(record) }
  }
  /** What an operator's peek reports at `now`, just after a request at `now`. */
  const peeked = (now: number) => ({
    offences: record?.count ?? 0,
    blockedUntil:
      record !== undefined && record.blockedUntil > now ? record.blockedUntil : undefined,
  })
  return { decide, peeked }
}

const shown = (record: Remembered | undefined) => ({
  offences: record?.count,
  blockedUntil: record?.blockedUntil,
})

const ALGORITHMS = {
  fixed_window: () => fixedWindow({ limit: 3, windowMs: 2000 }),
  token_bucket: () => tokenBucket({ rate: 1, periodMs: 500, burst: 3 }),
  sliding_log: () => slidingLog({ limit: 3, windowMs: 2000 }),
}
const RULES: Readonly<Record<keyof typeof ALGORITHMS, Partial<RuleConfig>>> = {
  fixed_window: { algorithm: 'fixed_window', limit: 3, window: '2s' },
  token_bucket: { algorithm: 'token_bucket', rate: 1, period: '500ms', burst: 3 },
  sliding_log: { algorithm: 'sliding_log', limit: 3, window: '2s' },
}

const paramsArb = fc
  .record({
    block: fc.integer({ min: 1, max: 3000 }),
    factor: fc.integer({ min: 1, max: 4 }),
    cap: fc.integer({ min: 0, max: 20_000 }),
    forgetAfter: fc.integer({ min: 1, max: 15_000 }),
  })
  .map(({ block, factor, cap, forgetAfter }) => ({
    block,
    factor,
    maxBlock: block + cap,
    forgetAfter,
  }))

const traceArb = fc.array(
  fc.record({
    advance: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 30_000 })),
    sweep: fc.boolean(),
  }),
  { minLength: 1, maxLength: 60 },
)

function penalisedRule(name: keyof typeof ALGORITHMS, p: Params): RuleConfig {
  return {
    id: 'login',
    match: { identity: 'ip' },
    ...RULES[name],
    penalty: {
      block: `${p.block}ms`,
      factor: p.factor,
      maxBlock: `${p.maxBlock}ms`,
      forgetAfter: `${p.forgetAfter}ms`,
    },
  } as RuleConfig
}

describe('penalties against an exact model', () => {
  it.each(Object.keys(ALGORITHMS) as (keyof typeof ALGORITHMS)[])(
    '%s: every verdict, block length, count and decay as the model says, sweeps included',
    (name) => {
      fc.assert(
        fc.property(paramsArb, traceArb, (p, trace) => {
          const store = memoryStore()
          const limiter = createLimiter({ rules: [penalisedRule(name, p)], store })
          const expected = model(ALGORITHMS[name](), p)
          const facts = { method: 'POST', path: '/login', identities: { ip: '192.0.2.1' } }
          let now = 0
          for (const { advance, sweep } of trace) {
            now += advance
            // A sweep drops states back to fresh: the offences must outlive them.
            if (sweep) store.sweep(now)
            const verdict = limiter.decide(facts, { now }) as Verdict
            const d = verdict.decisions[0]!
            expect({
              allowed: verdict.allowed,
              reason: verdict.reason,
              retryAfterMs: d.retryAfterMs,
              offences: d.offences,
              blockedUntil: d.blockedUntil,
            }).toEqual(expected.decide(now))
            const size = store.size
            const report = limiterOperations(limiter).peek('ip:192.0.2.1', 'login', {
              now,
            }) as KeyReport
            expect(store.size).toBe(size)
            expect({ offences: report.offences, blockedUntil: report.blockedUntil }).toEqual(
              expected.peeked(now),
            )
          }
        }),
        { numRuns: 150 },
      )
    },
  )
})

const LOGIN: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 2,
  window: '10s',
  penalty: { block: '1m', factor: 3, maxBlock: '5m', forgetAfter: '1h', forbidAfter: 3 },
}
const GLOBAL: RuleConfig = {
  id: 'global',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  period: '1h',
  burst: 100,
}
const FACTS = { method: 'POST', path: '/login', identities: { ip: '198.51.100.4' } }

describe('penalties through the limiter', () => {
  it.each(STORES)(
    '%s: blocks, grows, answers 403 from forbidAfter, and charges nothing while blocked',
    async (_name, make) => {
      const limiter = createLimiter({ rules: [LOGIN, GLOBAL], store: make() })
      const at = async (now: number) => {
        const v = await limiter.decide(FACTS, { now })
        const [login, global] = v.decisions
        return [v.allowed, v.reason, login!.retryAfterMs, login!.offences, global!.remaining]
      }
      expect(await at(0)).toEqual([true, undefined, undefined, undefined, 99])
      expect(await at(1)).toEqual([true, undefined, undefined, undefined, 98])
      // The third in the window is the first offence: blocked a minute.
      expect(await at(2)).toEqual([false, 'blocked', 60_000, 1, 98])
      // Refused while blocked, the other rule not charged; the window's end does not lift it.
      expect(await at(30_000)).toEqual([false, 'blocked', 30_002, 1, 98])
      expect(await at(60_001)).toEqual([false, 'blocked', 1, 1, 98])
      expect(await at(60_002)).toEqual([true, undefined, undefined, undefined, 97])
      expect(await at(60_003)).toEqual([true, undefined, undefined, undefined, 96])
      // Second offence: 1m × 3.
      expect(await at(60_004)).toEqual([false, 'blocked', 180_000, 2, 96])
      await at(240_004)
      await at(240_005)
      // Third: 9m capped at 5m, and forbidAfter: 3 answers 403 from now on, until the block ends.
      expect(await at(240_006)).toEqual([false, 'forbidden', 300_000, 3, 94])
      expect(await at(240_007)).toEqual([false, 'forbidden', 299_999, 3, 94])
      // An hour after the block ends the offences are forgotten: the next is a first one again.
      const later = 540_006 + 3_600_000
      await at(later)
      await at(later + 1)
      // (The global bucket got one unit back in the hour and more.)
      expect(await at(later + 2)).toEqual([false, 'blocked', 60_000, 1, 93])
    },
  )

  it('tells the truth in the decision of a blocked key: nothing left, and the block in reset and retry', () => {
    const limiter = createLimiter({ rules: [LOGIN] })
    for (let i = 0; i < 3; i++) limiter.decide(FACTS, { now: 0 })
    const d = (limiter.decide(FACTS, { now: 15_000 }) as Verdict).deciding!
    expect([
      d.allowed,
      d.remaining,
      d.limit,
      d.retryAfterMs,
      d.resetAfterMs,
      d.blockedUntil,
    ]).toEqual([false, 0, 2, 45_000, 45_000, 60_000])
  })

  it('is refused at start-up on a store that keeps no offences, naming the rules and the store', () => {
    expect(() => createLimiter({ rules: [LOGIN, GLOBAL], store: mapStore() })).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'store',
        message: expect.stringContaining('rules "login" penalise repeated denials (penalty)'),
      }),
    )
  })

  it('follows onStoreError when the store answers offences that are not', async () => {
    const inner = memoryStore()
    const garbled = (closed: boolean): Store => ({
      consume: (charges, now) => inner.consume(charges, now),
      refund: () => {},
      consumePenalised: (charges, now) => ({
        ...inner.consume(charges, now),
        offences: charges.map(() => ({ count: -1, blockedUntil: 'soon' }) as never),
      }),
      ...(closed ? {} : {}),
    })
    const closed = createLimiter({
      rules: [{ ...LOGIN, onStoreError: 'closed' }],
      store: garbled(true),
      logger: false,
    })
    expect((closed.decide(FACTS, { now: 0 }) as Verdict).reason).toBe('store-unavailable')
    const open = createLimiter({ rules: [LOGIN], store: garbled(false), logger: false })
    const verdict = open.decide(FACTS, { now: 0 }) as Verdict
    expect([verdict.allowed, verdict.storeFailed]).toEqual([true, true])
  })
})

describe('penalties as a part', () => {
  const parts = {
    algorithms: BUILT_IN_ALGORITHMS,
    routes: routeMatching,
    store: memoryStore,
    foreignOptions: undefined,
    penalties: undefined,
    clock: clockReader,
  }

  it('refuses a penalty in a limiter composed without the part, naming the part to add', () => {
    expect(() => composeLimiter({ rules: [LOGIN] }, parts)).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_RULE',
        rule: 'login',
        field: 'penalty',
        message: expect.stringContaining("penalty: needs penalties in createRateLimit's parts"),
      }),
    )
    // Rules validated with the part elsewhere still carry their penalty: refused all the same.
    expect(() => composeLimiter({ rules: defineRules([LOGIN]) }, parts)).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'penalties',
        message:
          '[tollgate] penalties: rules "login" have penalty, which needs penalties in createRateLimit\'s parts',
      }),
    )
    expect(() => composeLimiter({ rules: [LOGIN] }, { ...parts, penalties })).not.toThrow()
  })

  it('is checked among createRateLimit’s parts', () => {
    const algorithms = { fixed_window: fixedWindow }
    expect(() => kitParts({ algorithms, penalties: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'penalties' }),
    )
    expect(kitParts({ algorithms, penalties }).penalties).toBe(penalties)
  })
})

it('applies the penalty to limiter.check as to a request: the offence, the block, no charge', () => {
  const limiter = createLimiter({ rules: [LOGIN] })
  const key = 'ip:198.51.100.4'
  const at = (now: number) => {
    const d = limiter.check(key, 'login', { now }) as import('./types.js').RuleDecision
    return [d.allowed, d.retryAfterMs, d.offences]
  }
  expect([at(0), at(1), at(2)]).toEqual([
    [true, undefined, undefined],
    [true, undefined, undefined],
    [false, 60_000, 1],
  ])
  expect(at(59_000)).toEqual([false, 1002, 1])
  // A request sees the same block.
  expect((limiter.decide(FACTS, { now: 59_001 }) as Verdict).reason).toBe('blocked')
})
