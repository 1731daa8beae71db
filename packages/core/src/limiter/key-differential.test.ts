// keyOf and the store reply's count check against their code before the rewrite
// (old-decide/key-of.ts), on many generated rules, identities and replies.
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { isRateLimitError } from '../errors.js'
import { checkRules } from '../rules/define-rules.js'
import type { RuleConfig } from '../rules/types.js'
import { chargeOf } from './admitted-charges.js'
import { compiledRules } from './compile-rule.js'
import { consumeAll, keyOf, type Pending } from './decide.js'
import type { Engine } from './engine.js'
import { oldCountProblem, oldDecisionProblem, oldKeyOf } from './old-decide/key-of.js'
import { createReporter } from './report.js'
import { routeMatching } from './route-matching.js'
import { storeDecision } from './verdict.js'

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const NAMES = ['ip', 'user', 'api_key', 'tenant', 'region']
const VALUES = [undefined, '', 'a', '203.0.113.7', 'k_1', 'x&y#2:z', 'ü', ':', '&']

describe('keyOf', () => {
  it('builds the keys the old builder built, on generated rules and identities', () => {
    const next = random(7)
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
    for (let round = 0; round < 300; round++) {
      // No identity (a rule for the whole process), one, or several.
      const count = Math.floor(next() * 4)
      const identity = [...new Set(Array.from({ length: count }, () => pick(NAMES)))]
      const config = {
        id: `r${round}`,
        match: { identity: identity.length === 0 ? 'ip' : identity },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 2,
        onMissingIdentity: next() < 0.5 ? 'deny' : 'ip',
      } as RuleConfig
      const parts = { routes: routeMatching, penalties: undefined }
      const rules = checkRules([config], BUILT_IN_ALGORITHMS, parts)
      // Two compilations: each builder keeps its own key cache.
      const [now, old] = [0, 1].map(() => {
        const [rule] = compiledRules(rules, BUILT_IN_ALGORITHMS, parts)
        return identity.length === 0 ? { ...rule!, identity: [] } : rule!
      })
      for (let request = 0; request < 20; request++) {
        const identities: Record<string, string | undefined> = {}
        for (const name of NAMES) identities[name] = pick(VALUES)
        expect(keyOf(now!, identities)).toBe(oldKeyOf(old!, identities))
      }
    }
  })
})

describe("a store reply's decisions", () => {
  const rules = compiledRules(
    checkRules(
      [
        { id: 'a', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
        { id: 'b', match: { identity: 'user' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
      ],
      BUILT_IN_ALGORITHMS,
      { routes: routeMatching, penalties: undefined },
    ),
    BUILT_IN_ALGORITHMS,
    { routes: routeMatching, penalties: undefined },
  )
  const DECISION = { allowed: true, remaining: 1, limit: 2, resetAfterMs: 0 }
  const REPLIES: unknown[] = [
    undefined,
    null,
    5,
    'decisions',
    {},
    { decisions: undefined },
    { decisions: 'ab' },
    { decisions: { length: 2 } },
    { decisions: [] },
    { decisions: [DECISION] },
    { decisions: [DECISION, DECISION] },
    { decisions: [DECISION, DECISION, DECISION] },
  ]

  it.each(REPLIES.map((reply) => [JSON.stringify(reply) ?? String(reply), reply]))(
    'are counted as the old check counted them: %s',
    (_name, reply) => {
      for (const count of [1, 2]) {
        const errors: unknown[] = []
        const engine = {
          store: { consume: () => ({ ...(reply as object), at: 1000 }), refund: () => {} },
          consumeOne: undefined,
          reporter: createReporter(false, (error) => errors.push(error)),
          storeErrorRetryAfterMs: 1000,
          storeTimeoutMs: false,
          penalties: undefined,
          localFallback: undefined,
        } as unknown as Engine
        const charges = rules.slice(0, count).map((rule) => chargeOf(rule, `${rule.id}:k`, 1))
        const pending: Pending = {
          rules: rules.slice(0, count),
          plan: charges,
          charges,
          penalised: false,
        }
        const made = consumeAll(engine, pending, 1000)
        const old = oldCountProblem((reply as { decisions?: unknown } | null)?.decisions, count)
        const message = (errors[0] as Error | undefined)?.message
        if (old === undefined) expect(message ?? '').not.toMatch(/decisions for/)
        else expect(message).toBe(`[tollgate] ${old}`)
        expect(made).toMatchObject({ allowed: true })
      }
    },
  )
})

describe("a store's decision for one rule", () => {
  it('is refused as the old check refused it, on generated replies', () => {
    const [rule] = compiledRules(
      checkRules(
        [{ id: 'a', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 }],
        BUILT_IN_ALGORITHMS,
        { routes: routeMatching, penalties: undefined },
      ),
      BUILT_IN_ALGORITHMS,
      { routes: routeMatching, penalties: undefined },
    )
    const next = random(11)
    const FIGURES: unknown[] = [
      undefined,
      null,
      0,
      1,
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      999_999_999_999_999,
      1_000_000_000_000_000,
      '3',
      true,
      false,
      {},
    ]
    const FIELDS = [
      'allowed',
      'remaining',
      'limit',
      'resetAfterMs',
      'retryAfterMs',
      'delayMs',
    ] as const
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
    const replies: unknown[] = [undefined, null, 0, 'x', true, [], () => 1]
    for (let i = 0; i < 3000; i++) {
      const reply: { [field in (typeof FIELDS)[number]]?: unknown } = {}
      for (const field of FIELDS) {
        if (next() < 0.85) reply[field] = pick(FIGURES)
      }
      if (next() < 0.5) reply.allowed = next() < 0.5
      replies.push(reply)
    }
    let refused = 0
    for (const reply of replies) {
      const old = oldDecisionProblem('a', reply)
      let error: unknown
      try {
        storeDecision(rule!, reply, 1, 'ip:k')
      } catch (thrown) {
        error = thrown
      }
      if (old === undefined) expect(error).toBeUndefined()
      else {
        refused++
        expect(
          isRateLimitError(error) && [error.code, error.message, error.rule, error.field],
        ).toEqual(['ERR_RL_STORE_REPLY', `[tollgate] ${old.message}`, 'a', old.field])
      }
    }
    expect(refused).toBeGreaterThan(100)
    expect(refused).toBeLessThan(replies.length)
  })
})
