import { describe, expect, it } from 'vitest'
import type { QuotaPolicy } from '../algorithms/types.js'
import { RateLimitError } from '../errors.js'
import { isSingleValuedName } from '../headers/field-merge.js'
import { accessLists } from '../limiter/access-lists.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { createOldResponder } from './old-responder.test-copy.js'
import { createResponder, type ResponderOptions } from './responder.js'

// The responder's output on the wire (headers, their order, status and problem bodies) is
// compared with that of the responder before it was made smaller (old-responder.test-copy.ts), over
// many generated verdicts and header options: byte-identical, request after request, so that
// each one's caches are exercised alike.

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (below: number) => Math.floor(next() * below)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  return { next, int, pick, chance: (p: number) => next() < p }
}

type Random = ReturnType<typeof random>

const RULES = ['per-ip', 'login', 'a"b\\c', 'ünï', 'x y', 'global', 'api_key:*']
const WINDOWS = [1000, 60_000, 100, 1500, 3_600_000, 250, 86_400_000]
const REASONS: ReadonlyArray<Verdict['reason']> = [
  'limit',
  'limit',
  'blocked',
  'forbidden',
  'deny-list',
  'missing-identity',
  'store-unavailable',
]

const POLICIES = new Map<string, QuotaPolicy>()
/** The policy a compiled rule would carry: the same object for the same rule and figures. */
function policyOf(rule: string, policy: QuotaPolicy, fresh: boolean): QuotaPolicy {
  if (fresh) return policy
  const key = `${rule} ${policy.quota} ${policy.windowMs} ${policy.unit}`
  const known = POLICIES.get(key)
  if (known !== undefined) return known
  POLICIES.set(key, policy)
  return policy
}

function ruleDecision(r: Random, rule: string): RuleDecision {
  const concurrency = r.chance(0.2)
  const quota = r.pick([1, 5, 10, 100, 1000, 7, 999_999_999_999])
  const windowMs = r.pick(WINDOWS)
  const limit = concurrency || r.chance(0.6) ? quota : quota * r.pick([2, 3])
  const allowed = r.chance(0.55)
  const retryAfterMs = allowed ? undefined : r.chance(0.85) ? r.int(120_000) : undefined
  return {
    rule,
    mode: r.chance(0.75) ? 'enforce' : 'shadow',
    cost: r.pick([1, 1, 2, 5]),
    // One policy object per rule and figures, as compiled rules have; now and then a fresh one
    // (an app's own limiter may make them so).
    policy: policyOf(
      rule,
      concurrency ? { quota, windowMs: 0, unit: 'concurrent-requests' } : { quota, windowMs },
      r.chance(0.1),
    ),
    allowed,
    remaining: allowed ? r.int(limit + 1) : 0,
    limit,
    resetAfterMs: r.int(200_000),
    retryAfterMs,
    ...(r.chance(0.9) ? { key: r.pick([`ip:${r.int(5)}`, `user:${r.int(3)}`, 'k']) } : {}),
    ...(r.chance(0.1) ? { storeFailed: true } : {}),
  }
}

/**
 * The verdicts of a client the deny list refuses, and of one a penalty's `forbidAfter` refuses,
 * as a limiter made with both builds them (the first of each, at `at`), with the refusal each
 * carries: the parts' own, which the generated verdicts carry too.
 */
function partsVerdicts(at = 1_700_000_000_000) {
  const limiter = createLimiter({
    rules: [
      {
        id: 'login',
        match: { identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 1,
        window: '10s',
        penalty: { block: '1m', forbidAfter: 1 },
      },
      {
        id: 'shadowed',
        match: { identity: 'ip' },
        mode: 'shadow',
        algorithm: 'fixed_window',
        limit: 1,
        window: '1s',
      },
    ],
    lists: accessLists({ deny: { ip: '198.51.100.0/24' } }),
  })
  const decide = (ip: string, now: number) =>
    limiter.decide({ method: 'GET', path: '/', identities: { ip } }, { now }) as Verdict
  const denied = decide('198.51.100.7', at)
  decide('203.0.113.5', at)
  const forbidden = decide('203.0.113.5', at + 1)
  return { denied, forbidden, blockedAgain: decide('203.0.113.5', at + 30_000) }
}

const PARTS = partsVerdicts()

function generatedVerdict(r: Random): Verdict {
  const count = r.pick([0, 1, 1, 1, 2, 3, 4])
  const decisions = Array.from({ length: count }, () => ruleDecision(r, r.pick(RULES)))
  const enforcing = decisions.filter((d) => d.mode === 'enforce')
  const denying = enforcing.filter((d) => !d.allowed)
  const allowed = r.chance(0.1) ? !(denying.length === 0) : denying.length === 0
  const byRetry = (a: RuleDecision, b: RuleDecision) =>
    (b.retryAfterMs ?? 0) - (a.retryAfterMs ?? 0)
  const deciding = r.chance(0.1)
    ? r.pick([undefined, ...decisions])
    : allowed
      ? [...enforcing].sort((a, b) => a.remaining - b.remaining)[0]
      : [...denying].sort(byRetry)[0]
  const reason = allowed ? undefined : r.pick(REASONS)
  const at = r.int(2_000_000_000_000)
  // As the parts build them: the deny list's with no decision (no rule was consulted), a
  // forbidden one with its deciding rule, each with its refusal.
  if (reason === 'deny-list') {
    return { ...PARTS.denied, at, ...(r.chance(0.05) ? { storeFailed: true } : {}) }
  }
  return {
    allowed,
    reason: reason === 'forbidden' && deciding === undefined ? 'blocked' : reason,
    decisions,
    deciding,
    shadowDenied: decisions.filter((d) => d.mode === 'shadow' && !d.allowed),
    at,
    ...(r.chance(0.1) ? { waitMs: r.int(5000) } : {}),
    ...(r.chance(0.05) ? { storeFailed: true } : {}),
    ...(reason === 'forbidden' && deciding !== undefined && { refusal: PARTS.forbidden.refusal }),
  }
}

function generatedOptions(r: Random): ResponderOptions {
  const standardHeaders = r.pick([
    undefined,
    false,
    'draft-6',
    'draft-7',
    'draft-8',
    'draft-9',
    'draft-10',
    'draft-11',
    'draft-12',
  ] as const)
  const partitions = standardHeaders === undefined || /draft-(8|9|1)/.test(String(standardHeaders))
  return {
    legacyHeaders: r.pick([undefined, false, true]),
    legacyReset: r.pick([undefined, 'epoch-seconds', 'delta-seconds'] as const),
    standardHeaders,
    shadowPolicies: r.pick([undefined, false, true]),
    exposeHeaders: r.pick([undefined, false, true]),
    partitionKey: partitions
      ? r.pick([
          undefined,
          false,
          true,
          (d: RuleDecision) => (d.rule === 'login' ? undefined : d.rule),
          // What the types refuse but JavaScript may give: a number, '' and null.
          (d: RuleDecision) =>
            (d.rule === 'login' ? d.rule.length : d.key === undefined ? null : '') as string,
        ])
      : undefined,
    missingIdentity: r.pick([
      undefined,
      { status: 400 },
      { status: 403 },
      { status: 401, wwwAuthenticate: 'Bearer realm="api"' },
    ] as const),
  }
}

/** Everything a response puts on the wire, and the problem object adapters hand `onLimited`. */
function wire(response: ReturnType<ReturnType<typeof createResponder>['respond']>) {
  return {
    allowed: response.allowed,
    status: response.status,
    headers: response.headers.map(([name, value]) => [name, value]),
    body: response.body,
    problem: response.problem === undefined ? undefined : JSON.stringify(response.problem),
  }
}

/**
 * The fields `writeFields` writes, each with whether it holds one value: as the writer is told
 * (`single`, the families' own), or, for the old responder, whose families told no writer, as
 * `isSingleValuedName` says.
 */
function written(responder: Pick<ReturnType<typeof createResponder>, 'writeFields'>, v: Verdict) {
  const entries: Array<[string, string, boolean]> = []
  responder.writeFields(v, {
    write: (name, value, single) => entries.push([name, value, single === true]),
  })
  return entries
}

describe('the responder’s wire output, against the responder before it was made smaller', () => {
  it('is byte-identical over generated verdicts and header options', () => {
    let compared = 0
    for (let seed = 1; seed <= 400; seed++) {
      const r = random(seed)
      const options = generatedOptions(r)
      const now = createResponder(options)
      const old = createOldResponder(options)
      expect(now.headerNames, `seed ${seed}`).toEqual(old.headerNames)
      // Hono sets a denial's fields that hold one value: those of the old switch over every name.
      expect(now.singleValuedNames, `seed ${seed}`).toEqual(
        [...old.headerNames, 'Content-Type'].filter(isSingleValuedName),
      )
      for (let i = 0; i < 60; i++) {
        const v = generatedVerdict(r)
        const at = r.chance(0.5) ? v.at : v.at + r.int(10_000)
        expect(wire(now.respond(v, at)), `seed ${seed} #${i}`).toEqual(wire(old.respond(v, at)))
        if (v.allowed) {
          const before = written(old, v).map(([name, value]) => [
            name,
            value,
            isSingleValuedName(name),
          ])
          expect(written(now, v), `seed ${seed} #${i}`).toEqual(before)
        }
        compared++
      }
      for (const error of [
        new RateLimitError('ERR_RL_COST_EXCEEDS_CAPACITY', 'too big', { rule: 'login' }),
        new RateLimitError('ERR_RL_COST_EXCEEDS_CAPACITY', 'too big'),
        new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down', { rule: 'ünï' }),
        new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down'),
        new RateLimitError('ERR_RL_INVALID_RULE', 'bad'),
        new Error('not ours'),
      ]) {
        const ours = now.respondToError(error)
        const theirs = old.respondToError(error)
        expect(ours && wire(ours)).toEqual(theirs && wire(theirs))
      }
    }
    expect(compared).toBe(24_000)
  })

  it('answers the verdicts the deny list and penalties build as before', () => {
    const { denied, forbidden, blockedAgain } = PARTS
    expect([denied.reason, forbidden.reason, blockedAgain.reason]).toEqual([
      'deny-list',
      'forbidden',
      'forbidden',
    ])
    expect(denied.refusal).toEqual({
      detail: 'This client is not allowed to use this API.',
      code: 'deny-listed',
    })
    expect(forbidden.refusal).toEqual({
      detail: 'Blocked after repeated requests over the rate limit.',
      code: 'penalty-forbidden',
    })
    for (let seed = 1; seed <= 100; seed++) {
      const options = generatedOptions(random(seed))
      const now = createResponder(options)
      const old = createOldResponder(options)
      for (const v of [denied, forbidden, blockedAgain]) {
        expect(wire(now.respond(v, v.at)), `seed ${seed} ${v.reason}`).toEqual(
          wire(old.respond(v, v.at)),
        )
      }
    }
  })

  it('merges another middleware’s fields as before', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = random(seed * 7919)
      const options = generatedOptions(r)
      const now = createResponder(options)
      const old = createOldResponder(options)
      const first = new Map<string, string>()
      for (const [name, value] of createOldResponder(generatedOptions(r)).respond(
        generatedVerdict(r),
        0,
      ).headers) {
        first.set(name.toLowerCase(), value)
      }
      const v = generatedVerdict(r)
      const entries = old.respond(v, v.at).headers
      const existing = (name: string) => first.get(name)
      expect(now.writeFields.merge(entries, existing), `seed ${seed}`).toEqual(
        old.writeFields.merge(entries, existing),
      )
    }
  })
})
