// Penalties and the operator's calls on the Redis store against a real server: the penalty
// contract in both layouts, where the offences live and when they expire, a peek that creates
// no key, a limiter with a penalised rule end to end, several stores penalising one key at once,
// and what is still refused. Decisions are checked against the memory store by
// redis-penalties-differential.test.ts.
import {
  createLimiter,
  fixedWindow,
  limiterOperations,
  type RuleConfig,
  slidingLog,
} from '@tollgate/core'
import type { Charge, Penalty } from '@tollgate/core/store'
import { type RedisStore, redisStore } from '@tollgate/redis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { describePenaltyContract } from './support/penalty-suite.js'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

// A loaded machine may take longer than the default 5 s for the concurrent rounds.
vi.setConfig({ testTimeout: 60_000 })

const PENALTY: Penalty = {
  blockMs: 60_000,
  factor: 3,
  maxBlockMs: 300_000,
  forgetAfterMs: 3_600_000,
}
const FIXED = fixedWindow({ limit: 2, windowMs: 10_000 })
const LOG = slidingLog({ limit: 2, windowMs: 10_000 })
const KEY = 'ip:198.51.100.4'
const penalised = (cost: number, algorithm = FIXED, rule = 'login'): Charge => ({
  rule,
  algorithm,
  key: KEY,
  cost,
  shadow: false,
  penalty: PENALTY,
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

describe.skipIf(!redisAvailable)('penalties and operator calls on the Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })
  const command = (...args: string[]) => target.command(undefined, args)
  const store = (layout: 'rule' | 'identity', time: 'caller' | 'server' = 'caller'): RedisStore =>
    redisStore({
      client: target.client,
      time,
      prefix: uniquePrefix(`penalties-${layout}`),
      expiryMarginMs: time === 'caller' ? 600_000 : 0,
      timeoutMs: 10_000,
      layout,
    })

  // The identity layout runs it in redis-identity-layout.test.ts and redis-store.test.ts too.
  describe('layout rule: the penalty contract', () => {
    describePenaltyContract(() => store('rule'))
  })

  it('layout rule: keeps the offences in <state key>:offences, expiring at the forget time', async () => {
    const s = store('rule')
    await s.consumePenalised([penalised(2)], 0)
    const denied = await s.consumePenalised([penalised(1)], 1000)
    expect(denied.offences[0]).toEqual({ count: 1, blockedUntil: 61_000 })
    const stateKey = s.keyOf('login', KEY)
    expect(await command('EXISTS', `${stateKey}:offences`)).toBe(1)
    // Forgotten an hour after the block ends (the caller's clock: PX, plus the margin).
    const ttl = Number(await command('PTTL', `${stateKey}:offences`))
    expect(ttl).toBeGreaterThan(61_000 + 3_600_000 - 1000 + 600_000 - 5_000)
    expect(ttl).toBeLessThanOrEqual(61_000 + 3_600_000 - 1000 + 600_000)
    // The state's own key expires with its window; the offences outlive it.
    expect(Number(await command('PTTL', stateKey))).toBeLessThan(ttl)
  })

  it('layout identity: keeps the offences in the identity value, whose expiry covers both', async () => {
    const s = store('identity')
    // A sliding log keeps a key of its own; its offences still go to the identity value.
    await s.consumePenalised([penalised(2, LOG)], 0)
    await s.consumePenalised([penalised(1, LOG)], 1000)
    const identityKey = s.keyOf('login', KEY)
    expect(await command('EXISTS', identityKey)).toBe(1)
    const ttl = Number(await command('PTTL', identityKey))
    expect(ttl).toBeGreaterThan(61_000 + 3_600_000 - 1000 + 600_000 - 5_000)
    // The other rules of the identity keep their states in the same value, beside the record.
    await s.consume([{ rule: 'reads', algorithm: FIXED, key: KEY, cost: 1, shadow: false }], 2000)
    const after = await s.consumePenalised([penalised(0, LOG)], 2000)
    expect(after.offences[0]).toEqual({ count: 1, blockedUntil: 61_000 })
    expect(Number(await command('PTTL', identityKey))).toBeGreaterThan(ttl - 5_000)
  })

  it.each(['rule', 'identity'] as const)(
    'layout %s: a peek writes nothing and creates no key',
    async (layout) => {
      const s = store(layout)
      const status = await s.peek({ rule: 'login', algorithm: FIXED, key: KEY }, PENALTY, 5000)
      expect([status.decision.remaining, status.offences, status.at]).toEqual([2, undefined, 5000])
      const stateKey = s.keyOf('login', KEY)
      const offencesKey = layout === 'rule' ? `${stateKey}:offences` : stateKey
      expect(await command('EXISTS', stateKey, offencesKey)).toBe(0)
      // A key that holds a state and offences is left exactly as it was, even at a later time.
      await s.consumePenalised([penalised(2)], 5000)
      await s.consumePenalised([penalised(1)], 5000)
      const held = async () =>
        Promise.all([stateKey, offencesKey].map((key) => command('DUMP', key)))
      const before = await held()
      const seen = await s.peek({ rule: 'login', algorithm: FIXED, key: KEY }, PENALTY, 20_000)
      expect([seen.decision.remaining, seen.offences]).toEqual([
        2,
        { count: 1, blockedUntil: 65_000 },
      ])
      expect(await held()).toEqual(before)
    },
  )

  it.each(['rule', 'identity'] as const)(
    'layout %s: on the server’s clock, blocks from the server’s time',
    async (layout) => {
      const s = store(layout, 'server')
      await s.consumePenalised([penalised(2)], 0)
      const denied = await s.consumePenalised([penalised(1)], 0)
      expect(denied.offences[0]).toEqual({ count: 1, blockedUntil: denied.at + 60_000 })
      const peeked = await s.peek({ rule: 'login', algorithm: FIXED, key: KEY }, PENALTY, 0)
      expect(peeked.offences).toEqual({ count: 1, blockedUntil: denied.at + 60_000 })
      expect(
        Number(
          await command(
            'PTTL',
            layout === 'rule' ? `${s.keyOf('login', KEY)}:offences` : s.keyOf('login', KEY),
          ),
        ),
      ).toBeGreaterThan(3_600_000)
    },
  )

  it.each(['rule', 'identity'] as const)(
    'layout %s: a limiter with a penalised rule blocks, grows, forbids and forgets',
    async (layout) => {
      const limiter = createLimiter({ rules: [LOGIN, GLOBAL], store: store(layout) })
      const at = async (now: number) => {
        const v = await limiter.decide(FACTS, { now })
        const [login, global] = v.decisions
        return [v.allowed, v.reason, login!.retryAfterMs, login!.offences, global!.remaining]
      }
      expect(await at(0)).toEqual([true, undefined, undefined, undefined, 99])
      expect(await at(1)).toEqual([true, undefined, undefined, undefined, 98])
      expect(await at(2)).toEqual([false, 'blocked', 60_000, 1, 98])
      expect(await at(30_000)).toEqual([false, 'blocked', 30_002, 1, 98])
      expect(await at(60_001)).toEqual([false, 'blocked', 1, 1, 98])
      expect(await at(60_002)).toEqual([true, undefined, undefined, undefined, 97])
      expect(await at(60_003)).toEqual([true, undefined, undefined, undefined, 96])
      expect(await at(60_004)).toEqual([false, 'blocked', 180_000, 2, 96])
      await at(240_004)
      await at(240_005)
      expect(await at(240_006)).toEqual([false, 'forbidden', 300_000, 3, 94])
      const later = 540_006 + 3_600_000
      await at(later)
      await at(later + 1)
      expect(await at(later + 2)).toEqual([false, 'blocked', 60_000, 1, 93])
    },
  )

  it.each(['rule', 'identity'] as const)(
    'layout %s: the operator’s peek, block, unblock and reset through limiterOperations',
    async (layout) => {
      const limiter = createLimiter({ rules: [LOGIN, GLOBAL], store: store(layout) })
      const ops = limiterOperations(limiter)
      await limiter.decide(FACTS, { now: 0 })
      expect(await ops.peek(KEY, 'login', { now: 0 })).toMatchObject({
        offences: 0,
        blockedUntil: undefined,
      })
      await ops.block(KEY, 'login', '15m', { now: 10 })
      expect(await ops.peek(KEY, 'login', { now: 20 })).toMatchObject({ blockedUntil: 900_010 })
      expect((await limiter.decide(FACTS, { now: 30 })).reason).toBe('blocked')
      await ops.unblock(KEY, 'login', { now: 40 })
      expect((await limiter.decide(FACTS, { now: 50 })).allowed).toBe(true)
      await ops.reset(KEY, 'login', { now: 60 })
      const report = await ops.peek(KEY, 'login', { now: 60 })
      expect([report.decision.remaining, report.offences]).toEqual([2, 0])
    },
  )

  // Several processes' stores, each on its own connection, penalise one key at one instant: the
  // script reads and writes the record in one call, so each round records exactly one offence
  // (the first denial; every later one finds the key blocked), none lost, none counted twice.
  it.each(['rule', 'identity'] as const)(
    'layout %s: several stores penalising one key at once count every offence once',
    async (layout) => {
      const prefix = uniquePrefix(`penalties-race-${layout}`)
      const targets = await Promise.all([1, 2, 3, 4].map(() => ioredisTarget(REDIS_URL)))
      try {
        const stores = targets.map((t) =>
          redisStore({
            client: t.client,
            time: 'caller',
            prefix,
            expiryMarginMs: 600_000,
            timeoutMs: 10_000,
            layout,
            coalesce: false,
          }),
        )
        const penalty: Penalty = {
          blockMs: 1000,
          factor: 1,
          maxBlockMs: 1000,
          forgetAfterMs: 3_600_000,
        }
        const long = fixedWindow({ limit: 5, windowMs: 86_400_000 })
        const charge: Charge = {
          rule: 'race',
          algorithm: long,
          key: KEY,
          cost: 1,
          shadow: false,
          penalty,
        }
        const ROUNDS = 5
        for (let round = 1; round <= ROUNDS; round++) {
          const now = round * 10_000
          const outcomes = await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              stores[i % stores.length]!.consumePenalised([charge], now),
            ),
          )
          // The first round admits the window's 5, later rounds none (a blocked request's look
          // at a full window is a denial too); every round adds exactly one offence.
          const admitted = outcomes.filter((o) => o.decisions[0]!.allowed)
          expect(admitted.length, `round ${round}`).toBe(round === 1 ? 5 : 0)
          expect(
            outcomes.every((o) => o.offences[0] === undefined || o.offences[0].count === round),
            `round ${round}`,
          ).toBe(true)
          const peeked = await stores[0]!.peek(
            { rule: 'race', algorithm: long, key: KEY },
            penalty,
            now,
          )
          expect(peeked.offences, `round ${round}`).toEqual({
            count: round,
            blockedUntil: now + 1000,
          })
        }
      } finally {
        await Promise.all(targets.map((t) => t.close()))
      }
    },
  )
})

// What is still refused: nothing here reaches a server.
describe('the Redis store: operator calls it refuses', () => {
  const noCall = async (): Promise<never> => {
    throw new Error('no call expected')
  }
  const client = { evalsha: noCall, eval: noCall }

  it('refuses a block under a rule without a penalty, naming the rule, before any call', () => {
    const ops = limiterOperations(createLimiter({ rules: [GLOBAL], store: redisStore({ client }) }))
    expect(() => ops.block(KEY, 'global', '1m')).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE' }),
    )
  })

  it('refuses a hand-built penalty the script cannot read, naming the field', async () => {
    const s = redisStore({ client, time: 'caller' })
    await expect(
      s.consumePenalised([{ ...penalised(1), penalty: { ...PENALTY, factor: 1.5 } }], 0),
    ).rejects.toMatchObject({ code: 'ERR_RL_INVALID_RULE', field: 'penalty.factor' })
  })
})
