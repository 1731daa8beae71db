import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIME_MS } from '../algorithms/integer.js'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { RateLimitError } from '../errors.js'
import { checkRules, EVERY_READER } from '../rules/define-rules.js'
import type { RuleConfig } from '../rules/types.js'
import type { Charge, Offences, Outcome, PenalisedOutcome, Store } from '../store/types.js'
import { chargeOf } from './admitted-charges.js'
import type { CompiledRule } from './compile-rule.js'
import { compiledRules } from './compile-rule.js'
import { createLimiter } from './create-limiter.js'
import { keyOf, UNKNOWN_CLIENT_KEY } from './decide.js'
import { type Engine, isPromiseLike } from './engine.js'
import { estimateFor } from './estimate.js'
import { reportFallback } from './fallback.js'
import { penalties } from './penalised.js'
import { createReporter } from './report.js'
import { routeMatching } from './route-matching.js'
import { reservations } from './settle.js'
import { replyWithin } from './store-deadline.js'
import type {
  DenyReason,
  MaybePromise,
  RequestFacts,
  RuleDecision,
  StoreErrorContext,
  Verdict,
} from './types.js'
import { combine, madeUpDecision, NONE, replyError, shown, storeDecision } from './verdict.js'

/*
 * A request's rules were once decided from a `Pending` split into charged rules and
 * missing-identity denials, re-sorted into rule order afterwards; they are now planned in rule
 * order from the start. The old implementation, copied below, and the limiter must give the same
 * verdicts, the same onError contexts and the same warnings over generated requests: several
 * rules, shadow and enforcing, missing identities, and a store that answers, throws, rejects,
 * hangs past storeTimeoutMs or answers garbage, with rules failing open, closed or falling back.
 */

type Identities = RequestFacts['identities']

// ---- the old implementation (decide.ts, fallback.ts, penalised.ts before the change) ----

/** The engine as the old code had it: its reporter took the context built by the caller. */
type OldEngine = Omit<Engine, 'reporter'> & {
  readonly reservations: { readonly estimateFor: typeof estimateFor } | undefined
  readonly reporter: {
    warnOnce: Engine['reporter']['warnOnce']
    storeError(error: unknown, context: StoreErrorContext): void
  }
}

/** A request's cost under a rule: its estimate when the rule settles, else by route. */
function costFor(
  engine: OldEngine,
  rule: CompiledRule,
  method: string,
  path: string,
  estimate: number | undefined,
): number {
  if (estimate !== undefined && rule.settleWithinMs !== undefined) {
    return engine.reservations!.estimateFor(rule, estimate)
  }
  const costs = rule.costs
  return costs === undefined ? rule.cost : costs.costOf(method, path, rule.cost, undefined)
}

/** A request's rules split into those charged to the store and those decided without it. */
type Pending = {
  /** Every matching rule, in rule order. */
  readonly matched: readonly CompiledRule[]
  readonly charged: CompiledRule[]
  readonly charges: Charge[]
  /** Denials of rules that refuse requests lacking their identity (`NONE` if none). */
  missing: readonly RuleDecision[]
  /** True when a charge carries a rule's penalty: the store's `consumePenalised` decides. */
  penalised: boolean
}

/** The charge of one rule for one key: a store call that failed. */
function onePending(rule: CompiledRule, key: string, cost: number): Pending {
  return {
    matched: [rule],
    charged: [rule],
    charges: [chargeOf(rule, key, cost)],
    missing: NONE,
    penalised: false,
  }
}

function decideAll(
  engine: OldEngine,
  matched: readonly CompiledRule[],
  identities: Identities,
  method: string,
  path: string,
  now: number,
  estimate?: number,
): MaybePromise<Verdict> {
  // Arrays of the matched rules' length, cut short when a rule lacks its identity: a push onto
  // an empty array would allocate room for 17.
  const count = matched.length
  const charged: CompiledRule[] = new Array(count)
  const charges: Charge[] = new Array(count)
  const pending: Pending = { matched, charged, charges, missing: NONE, penalised: false }
  let made = 0
  let refused = false
  let missing: RuleDecision[] | undefined
  for (let i = 0; i < count; i++) {
    const rule = matched[i]!
    const cost = costFor(engine, rule, method, path, estimate)
    const key = keyOf(rule, identities)
    if (key === undefined) {
      if (missing === undefined) pending.missing = missing = []
      missing.push(madeUpDecision(rule, false, cost))
      if (!rule.shadow) refused = true
      continue
    }
    if (key === UNKNOWN_CLIENT_KEY) {
      engine.reporter.warnOnce(
        'WARN_SHARED_CLIENT_BUCKET',
        // The warning's text as it is now (shortened since): the verdicts are what is compared.
        `rule "${rule.id}": requests without an ip identity share one bucket`,
      )
    }
    charged[made] = rule
    const penalty = rule.penalty
    charges[made] = chargeOf(rule, key, cost)
    if (penalty !== undefined) {
      charges[made] = { ...charges[made]!, penalty }
      pending.penalised = true
    }
    made++
  }
  if (made < count) {
    charged.length = made
    charges.length = made
  }
  if (refused) return combine(pending.missing, now, 'missing-identity')
  return consumeAll(engine, pending, now)
}

/** Charges a request's rules to the store as one unit and reads the reply into a verdict. */
function consumeAll(engine: OldEngine, pending: Pending, now: number): MaybePromise<Verdict> {
  if (pending.charges.length === 0) return combine(pending.missing, now)
  let outcome: MaybePromise<Outcome>
  try {
    outcome = pending.penalised
      ? engine.store.consumePenalised!(pending.charges, now)
      : engine.store.consume(pending.charges, now)
    if (isPromiseLike(outcome)) {
      // Adopted (Promise.resolve in replyWithin), not outcome.then: a thenable's own `then` may
      // throw, call back twice or return anything. Inside the try, since reading `then` (or a
      // promise's `constructor`) can throw too.
      return replyWithin(outcome, engine.storeTimeoutMs, 'consume').then(
        (reply) => verdictOfReply(engine, pending, reply, now),
        (error: unknown) => storeFailure(engine, pending, error, now),
      )
    }
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return verdictOfReply(engine, pending, outcome, now)
}

/** Turns the store's reply into a verdict; a reply that is not one is a store failure. */
function verdictOfReply(
  engine: OldEngine,
  pending: Pending,
  outcome: Outcome,
  now: number,
): Verdict {
  const { charged, charges } = pending
  const made: RuleDecision[] = new Array(charged.length)
  let at: number
  // Set when a penalty's block refuses the request ('blocked', 'forbidden'); else 'limit'.
  let reason: DenyReason | undefined
  // Everything read from the reply is read here, once, into the limiter's own objects, which
  // are then checked: a getter or proxy in the reply that throws is caught like a bad figure.
  try {
    const decisions = outcome?.decisions
    if (!Array.isArray(decisions) || decisions.length !== charges.length) {
      throw replyError(
        `the store answered ${Array.isArray(decisions) ? decisions.length : 'no'} decisions for ${charges.length} charges`,
      )
    }
    at = outcome.at
    // `at` places X-RateLimit-Reset and is handed back to the store by refund as `chargedAt`.
    if (!Number.isSafeInteger(at) || at < 0 || at > MAX_TIME_MS) {
      throw replyError(`the store answered at ${shown(at)}, expected whole ms since the epoch`)
    }
    for (let i = 0; i < charged.length; i++) {
      const charge = charges[i]!
      made[i] = storeDecision(charged[i]!, decisions[i], charge.cost, charge.key)
    }
    if (pending.penalised) {
      const offences = (outcome as PenalisedOutcome).offences
      // The old part's decisions (`oldPenalties`), which took the offences themselves.
      const decisions = (engine.penalties as unknown as typeof oldPenalties).decisions
      reason = decisions(charged, made, offences, at)
    }
  } catch (error) {
    return storeFailure(engine, pending, error, now)
  }
  return combine(inRuleOrder(pending, made), at, reason)
}

/**
 * The store failed: each charged enforcing rule's `onStoreError` decides. Any fail-closed one
 * denies the request; otherwise the rules that fall back are decided in this process (the
 * request is decided by them), and the rest pass, with no figures to report.
 */
function storeFailure(engine: OldEngine, pending: Pending, error: unknown, now: number): Verdict {
  const { charged, charges } = pending
  const denials: RuleDecision[] = []
  charged.forEach((rule, i) => {
    if (rule.shadow || !rule.failClosed) return
    const charge = charges[i]!
    denials.push(
      madeUpDecision(rule, false, charge.cost, charge.key, engine.storeErrorRetryAfterMs),
    )
  })
  const failClosed = denials.length > 0
  const local = failClosed ? undefined : decideLocally(engine, charged, charges, now)
  engine.reporter.storeError(error, {
    operation: 'consume',
    rules: charged.filter((rule) => !(local && rule.fallback)).map((rule) => rule.id),
    failClosed,
    ...(local && { fallback: local.map((d) => d.rule) }),
  })
  if (local !== undefined) return combine(inRuleOrder(pending, local), now)
  return combine(
    inRuleOrder(pending, denials),
    now,
    failClosed ? 'store-unavailable' : 'limit',
    true,
  )
}

/** Merges decisions with the missing-identity denials, in rule order. */
function inRuleOrder(pending: Pending, decisions: RuleDecision[]): RuleDecision[] {
  if (pending.missing.length === 0) return decisions
  const at = (d: RuleDecision) => pending.matched.findIndex((rule) => rule.id === d.rule)
  return [...decisions, ...pending.missing].sort((a, b) => at(a) - at(b))
}

function decideLocally(
  engine: OldEngine,
  charged: readonly CompiledRule[],
  charges: readonly Charge[],
  now: number,
): RuleDecision[] | undefined {
  const store = engine.store
  if (typeof store.consumeLocally !== 'function') return undefined
  const rules = charged.filter((rule) => rule.fallback)
  if (rules.length === 0) return undefined
  const picked = charges.filter((_, i) => charged[i]!.fallback)
  try {
    // Each decision is checked as the store's are: a missing or malformed one throws.
    const decisions = store.consumeLocally(picked, now).decisions
    return rules.map((rule, i): RuleDecision => {
      const charge = picked[i]!
      return { ...storeDecision(rule, decisions[i], charge.cost, charge.key), degraded: true }
    })
  } catch (error) {
    engine.reporter.storeError(error, {
      operation: 'consume',
      rules: rules.map((rule) => rule.id),
      failClosed: false,
    })
    return undefined
  }
}

/**
 * A rule's decision for a key its penalty blocks until `blockedUntil`: denied, nothing left while
 * blocked, and a retry at the block's end or when the quota allows the request, whichever is
 * later (nothing is charged meanwhile, so both are exact).
 */
function blockedDecision(
  decision: RuleDecision,
  blockedUntil: number,
  offences: number,
  at: number,
): RuleDecision {
  const blockedFor = blockedUntil - at
  const retryAfterMs = Math.max(blockedFor, decision.allowed ? 0 : decision.retryAfterMs!)
  return {
    ...decision,
    allowed: false,
    remaining: 0,
    resetAfterMs: Math.max(decision.resetAfterMs, retryAfterMs),
    retryAfterMs,
    delayMs: undefined,
    blockedUntil,
    offences,
  }
}

/**
 * Reads the offences a store answered beside a request's decisions (`consumePenalised`): the
 * decision of each enforcing rule whose penalty blocks the key at `at` becomes a blocked denial.
 * Returns why the request is refused when a block refuses it (`forbidden` once the offences
 * reach the rule's `forbidAfter`), else undefined. A reply that is not one throws
 * `ERR_RL_STORE_REPLY`, for the rules' `onStoreError` to decide.
 */
function penalisedDecisions(
  charged: readonly CompiledRule[],
  made: RuleDecision[],
  offences: unknown,
  at: number,
): DenyReason | undefined {
  if (!Array.isArray(offences) || offences.length !== charged.length) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered ${Array.isArray(offences) ? offences.length : 'no'} offence records for ${charged.length} charges`,
    )
  }
  let reason: DenyReason | undefined
  for (let i = 0; i < charged.length; i++) {
    const rule = charged[i]!
    const record = offences[i] as Offences | undefined
    if (rule.penalty === undefined || record === undefined || record === null) continue
    const { count, blockedUntil } = checkOffences(rule, record)
    if (rule.shadow || blockedUntil <= at) continue
    made[i] = blockedDecision(made[i]!, blockedUntil, count, at)
    // Read from the rule as written: only a blocked client's reply needs it.
    const forbidAfter = rule.rule.penalty?.forbidAfter
    if (forbidAfter !== undefined && count >= forbidAfter) reason = 'forbidden'
    else reason ??= 'blocked'
  }
  return reason
}

function checkOffences(rule: CompiledRule, record: unknown): Offences {
  const { count, blockedUntil } = (record ?? {}) as Partial<Offences>
  if (
    Number.isSafeInteger(count) &&
    count! >= 0 &&
    Number.isSafeInteger(blockedUntil) &&
    blockedUntil! >= 0
  ) {
    return { count: count!, blockedUntil: blockedUntil! }
  }
  throw new RateLimitError(
    'ERR_RL_STORE_REPLY',
    `the store's offences for rule "${rule.id}" have count ${shown(count)} and blockedUntil ${shown(blockedUntil)}, expected whole numbers ≥ 0`,
    { rule: rule.id },
  )
}

const oldPenalties = { ...penalties, decisions: penalisedDecisions }

/**
 * The verdict of one rule's decision, as `combine` makes it of one, written out: the one-rule
 * path of every request on a synchronous store, with no loop and no second builder.
 */
function singleVerdict(decision: RuleDecision, at: number): Verdict {
  const shadow = decision.mode === 'shadow'
  const allowed = decision.allowed || shadow
  return {
    allowed,
    reason: allowed ? undefined : 'limit',
    decisions: [decision],
    deciding: shadow ? undefined : decision,
    shadowDenied: shadow && !decision.allowed ? [decision] : NONE,
    at,
    storeFailed: false,
    waitMs: shadow || !decision.allowed ? undefined : decision.delayMs || undefined,
    slotsReleased: undefined,
  }
}

/** The old `decide` of a request matching every rule, as `requestDecider` then ran it. */
function oldDecide(
  engine: OldEngine,
  matched: readonly CompiledRule[],
  identities: Identities,
  now: number,
): MaybePromise<Verdict> {
  const first = matched[0]!
  if (matched.length === 1 && engine.consumeOne !== undefined && first.penalty === undefined) {
    const key = keyOf(first, identities)
    if (key !== undefined && key !== UNKNOWN_CLIENT_KEY) {
      const cost = first.cost
      try {
        const reply = engine.consumeOne(first.id, first.algorithm, key, cost, now)
        return singleVerdict(storeDecision(first, reply, cost, key), now)
      } catch (error) {
        return storeFailure(engine, onePending(first, key, cost), error, now)
      }
    }
  }
  return decideAll(engine, matched, identities, 'GET', '/', now)
}

// ---- generated cases ----

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const STORE_MODES = [
  'sync',
  'async',
  'throws',
  'rejects',
  'hangs',
  'no outcome',
  'too few decisions',
  'bad at',
  'bad decision',
  'decision not an object',
  'getter throws',
  'thenable then throws',
  'bad offences',
] as const
type StoreMode = (typeof STORE_MODES)[number]
const LOCAL_MODES = ['none', 'decides', 'throws', 'bad decision'] as const
type LocalMode = (typeof LOCAL_MODES)[number]
const IDENTITIES = [['ip'], ['user'], ['user', 'ip'], ['ip', 'user']] as const

type Case = {
  readonly rules: RuleConfig[]
  readonly identities: Identities
  readonly mode: StoreMode
  readonly local: LocalMode
  readonly consumeOne: boolean
  readonly seed: number
}

function caseOf(seed: number): Case {
  const next = random(seed)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
  const count = 1 + Math.floor(next() * 4)
  const rules: RuleConfig[] = []
  for (let i = 0; i < count; i++) {
    const mode = pick(['enforce', 'shadow'] as const)
    rules.push({
      id: `r${i}`,
      match: { identity: [...pick(IDENTITIES)] },
      algorithm: 'token_bucket',
      rate: 1 + Math.floor(next() * 9),
      burst: 1 + Math.floor(next() * 20),
      cost: Math.floor(next() * 2),
      mode,
      onStoreError: pick(['open', 'closed', 'fallback'] as const),
      onMissingIdentity: pick(['ip', 'deny'] as const),
      ...(mode === 'enforce' && next() < 0.25 && { penalty: { block: '1m', forbidAfter: 3 } }),
    } as RuleConfig)
  }
  const identities: Record<string, string | undefined> = {}
  const ip = pick(['203.0.113.7', '', undefined])
  if (ip !== undefined) identities['ip'] = ip
  const user = pick(['alice', '', undefined])
  if (user !== undefined) identities['user'] = user
  return {
    rules,
    identities,
    mode: pick(STORE_MODES),
    local: pick(LOCAL_MODES),
    consumeOne: next() < 0.5,
    seed,
  }
}

const down = new Error('store down')

/** A store answering each charge from its rule, key and cost alone, as the case says. */
function storeOf(c: Case): Store {
  const decisionOf = (charge: Charge, i: number) => {
    const h = (charge.key.length * 7 + charge.cost * 3 + i + c.seed) % 5
    const limit = charge.algorithm.limit
    return h === 0
      ? { allowed: false, remaining: 0, limit, resetAfterMs: 900, retryAfterMs: 100 * (i + 1) }
      : { allowed: true, remaining: h, limit, resetAfterMs: 100 * h, retryAfterMs: undefined }
  }
  const outcomeOf = (charges: readonly Charge[], now: number): unknown => {
    const decisions: unknown[] = charges.map(decisionOf)
    const offences = charges.map((_, i) =>
      (c.seed + i) % 3 === 0 ? { count: 1 + (i % 4), blockedUntil: now + 60_000 } : undefined,
    )
    switch (c.mode) {
      case 'no outcome':
        return undefined
      case 'too few decisions':
        return { decisions: decisions.slice(1), at: now, offences }
      case 'bad at':
        return { decisions, at: MAX_TIME_MS + 1, offences }
      case 'bad decision':
        decisions[decisions.length - 1] = { ...(decisions.at(-1) as object), remaining: -1 }
        return { decisions, at: now, offences }
      case 'decision not an object':
        decisions[0] = 'yes'
        return { decisions, at: now, offences }
      case 'getter throws':
        return {
          get decisions() {
            throw down
          },
        }
      case 'bad offences':
        return { decisions, at: now, offences: offences.slice(1) }
      default:
        return { decisions, at: now, offences }
    }
  }
  const consume = (charges: readonly Charge[], now: number) => {
    switch (c.mode) {
      case 'throws':
        throw down
      case 'rejects':
        return Promise.reject(down)
      case 'hangs':
        return new Promise<never>(() => {})
      case 'async':
        return Promise.resolve(outcomeOf(charges, now))
      case 'thenable then throws':
        return {
          // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being tested
          get then(): never {
            throw down
          },
        }
      default:
        return outcomeOf(charges, now)
    }
  }
  const store: Store & Record<string, unknown> = {
    consume: consume as Store['consume'],
    consumePenalised: consume as Store['consumePenalised'],
    refund: () => {},
  }
  if (c.local !== 'none' || c.rules.some((rule) => rule.onStoreError === 'fallback')) {
    store['consumeLocally'] = (charges: readonly Charge[], now: number): Outcome => {
      if (c.local === 'throws') throw new Error('local down')
      const decisions = charges.map(decisionOf)
      if (c.local === 'bad decision') return { decisions: decisions.slice(1), at: now }
      return { decisions, at: now }
    }
  }
  if (c.consumeOne) {
    store['consumeOne'] = (
      rule: string,
      algorithm: Charge['algorithm'],
      key: string,
      cost: number,
      now: number,
    ) => {
      const charge = { rule, algorithm, key, cost, shadow: false }
      const outcome = outcomeOf([charge], now) as Outcome | undefined
      if (c.mode === 'throws' || c.mode === 'getter throws') throw down
      return outcome?.decisions?.[0]
    }
  }
  return store
}

type Heard = { errors: string[]; contexts: StoreErrorContext[]; warnings: string[] }

function heard(): Heard & {
  onError: (error: unknown, context: StoreErrorContext) => void
  logger: { warn(line: string): void }
} {
  const h: Heard = { errors: [], contexts: [], warnings: [] }
  return {
    ...h,
    onError: (error, context) => {
      h.errors.push(
        error instanceof RateLimitError ? `${error.code}: ${error.message}` : String(error),
      )
      h.contexts.push(context)
    },
    logger: { warn: (line) => h.warnings.push(line) },
    get errors() {
      return h.errors
    },
    get contexts() {
      return h.contexts
    },
    get warnings() {
      return h.warnings
    },
  }
}

const NOW = 1_700_000_000_000

/** The refusal a forbidden client's verdict carries (the penalties part's). */
const FORBIDDEN = {
  detail: 'Blocked after repeated requests over the rate limit.',
  code: 'penalty-forbidden',
}

async function settled(verdict: MaybePromise<Verdict>): Promise<Verdict> {
  if (!isPromiseLike(verdict)) return verdict
  await vi.advanceTimersByTimeAsync(10)
  return verdict
}

async function bothWays(c: Case) {
  const store = storeOf(c)
  const withOnError = c.seed % 4 !== 0
  const fresh = heard()
  const limiter = createLimiter({
    rules: c.rules,
    store,
    storeTimeoutMs: 5,
    logger: fresh.logger,
    ...(withOnError && { onError: fresh.onError }),
  })
  const now = await settled(
    limiter.decide({ method: 'GET', path: '/', identities: c.identities }, { now: NOW }),
  )
  const was = heard()
  const made = createReporter(was.logger, withOnError ? was.onError : undefined)
  // The reporter as the old code called it, with the context built by the caller.
  const reporter = {
    warnOnce: made.warnOnce,
    storeError: (error: unknown, c: StoreErrorContext) =>
      c.fallback
        ? reportFallback(made, error, c.rules, c.fallback)
        : made.storeError(error, c.operation, c.rules, c.failClosed),
  }
  const consumeOne = (store as { consumeOne?: Engine['consumeOne'] }).consumeOne
  const engine: OldEngine = {
    store,
    consumeOne: consumeOne?.bind(store),
    reporter,
    storeErrorRetryAfterMs: 1000,
    storeTimeoutMs: 5,
    penalties: oldPenalties as unknown as OldEngine['penalties'],
    reservations: undefined,
    localFallback: undefined,
  }
  const rules = compiledRules(
    checkRules(c.rules, BUILT_IN_ALGORITHMS, EVERY_READER),
    BUILT_IN_ALGORITHMS,
    { routes: routeMatching, penalties, reservations: undefined },
  )
  const before = await settled(oldDecide(engine, rules, c.identities, NOW))
  return { now, before, heardNow: fresh, heardBefore: was }
}

describe('deciding a request from its plan in rule order', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('gives the verdicts, onError contexts and warnings the old pending split gave', async () => {
    const seen = new Set<string>()
    for (let seed = 1; seed <= 3000; seed++) {
      const c = caseOf(seed)
      const { now, before, heardNow, heardBefore } = await bothWays(c)
      // The one difference on purpose: a forbidden client's verdict carries its 403's texts.
      expect(now, `case ${seed}: ${JSON.stringify(c)}`).toStrictEqual(
        before.reason === 'forbidden' ? { ...before, refusal: FORBIDDEN } : before,
      )
      expect(heardNow.contexts, `case ${seed}`).toStrictEqual(heardBefore.contexts)
      expect(heardNow.errors, `case ${seed}`).toStrictEqual(heardBefore.errors)
      expect(heardNow.warnings, `case ${seed}`).toStrictEqual(heardBefore.warnings)
      seen.add(`${now.allowed}/${now.reason}/${now.storeFailed}/${now.decisions.length}`)
    }
    // The cases reach every kind of verdict: admitted, limited, refused for a missing identity,
    // failed closed, blocked and forbidden, with several decisions or none.
    const reasons = new Set([...seen].map((s) => s.split('/')[1]))
    for (const reason of [
      'undefined',
      'limit',
      'missing-identity',
      'store-unavailable',
      'blocked',
      'forbidden',
    ]) {
      expect(reasons).toContain(reason)
    }
  })
})

describe("a one-rule request's verdict", () => {
  it('is the one the old builder for one decision wrote out', () => {
    const next = random(7)
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
    for (let i = 0; i < 2000; i++) {
      const allowed = next() < 0.5
      const d: RuleDecision = {
        allowed,
        remaining: pick([0, 1, 5]),
        limit: 5,
        resetAfterMs: pick([0, 100]),
        retryAfterMs: allowed ? pick([undefined, 0]) : pick([0, 250]),
        delayMs: pick([undefined, 0, 1, 300]),
        rule: 'r0',
        mode: pick(['enforce', 'shadow'] as const),
        cost: pick([0, 1]),
        policy: { quota: 5, windowMs: 1000 } as RuleDecision['policy'],
        key: 'ip:203.0.113.7',
        storeFailed: false,
      }
      const at = pick([0, NOW])
      expect(combine([d], at), JSON.stringify(d)).toStrictEqual(singleVerdict(d, at))
    }
  })
})

describe("a request's cost under a rule", () => {
  // Read through the rule's costs (a settling rule's estimate compiled into them) rather than
  // tested on every rule: the same costs, and the same refusals, as `costFor` gave.
  const outcome = (cost: () => number) => {
    try {
      return cost()
    } catch (error) {
      return error instanceof RateLimitError ? `${error.code}: ${error.message}` : String(error)
    }
  }

  it('is the one the estimate, the route or the rule gave before', () => {
    const next = random(11)
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
    const engine = { reservations: { estimateFor } } as unknown as OldEngine
    for (let i = 0; i < 500; i++) {
      const rule = {
        id: `r${i}`,
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 5,
        burst: pick([3, 10]),
        cost: pick([0, 1, 2]),
        ...(next() < 0.5 && { settle: true }),
        ...(next() < 0.5 && { costByRoute: { 'POST /upload': 3, '/v1/*': 2 } }),
      } as RuleConfig
      const [compiled] = compiledRules(
        checkRules([rule], BUILT_IN_ALGORITHMS, EVERY_READER),
        BUILT_IN_ALGORITHMS,
        { routes: routeMatching, penalties: undefined, reservations },
      )
      const method = pick(['GET', 'POST'])
      const path = pick(['/upload', '/v1/labels', '/'])
      const estimate = pick([undefined, 0, 2, 7, 11, -1, 1.5])
      const costs = compiled!.costs
      const now = outcome(() =>
        costs === undefined ? compiled!.cost : costs.costOf(method, path, compiled!.cost, estimate),
      )
      const before = outcome(() => costFor(engine, compiled!, method, path, estimate))
      expect(now, JSON.stringify({ rule, method, path, estimate })).toStrictEqual(before)
    }
  })
})

describe('the key of a rule keyed on several identities', () => {
  /** The loop as it was written before (indexed, the separator chosen by position). */
  function oldCompoundKey(
    names: readonly string[],
    identities: Identities,
    fallback: () => string | undefined,
  ): string | undefined {
    let key = ''
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!
      const value = identities[name]
      if (value === undefined || value === '') return fallback()
      key += `${i === 0 ? '' : '&'}${name}#${value.length}:${value}`
    }
    return key
  }

  it('is the one the indexed loop built, whatever the values hold', () => {
    const next = random(5)
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
    const VALUES = [undefined, '', 'a', '&', '#1:x', 'ключ', 'k&user#3:bob', '203.0.113.7']
    for (let i = 0; i < 500; i++) {
      const names = pick([
        ['user', 'ip'],
        ['api_key', 'user', 'ip'],
        ['ip', 'user'],
      ])
      const onMissingIdentity = pick(['ip', 'deny'] as const)
      const [rule] = compiledRules(
        checkRules(
          [
            {
              id: 'r',
              match: { identity: names },
              algorithm: 'token_bucket',
              rate: 1,
              burst: 1,
              onMissingIdentity,
            } as RuleConfig,
          ],
          BUILT_IN_ALGORITHMS,
          EVERY_READER,
        ),
        BUILT_IN_ALGORITHMS,
        { routes: routeMatching, penalties: undefined, reservations: undefined },
      )
      const identities: Record<string, string | undefined> = {}
      for (const name of ['user', 'ip', 'api_key']) identities[name] = pick(VALUES)
      const fallback = () =>
        onMissingIdentity === 'deny' ? undefined : `ip:${identities['ip'] ?? ''}`
      expect(keyOf(rule!, identities), JSON.stringify(identities)).toBe(
        oldCompoundKey(names, identities, fallback),
      )
    }
  })
})
