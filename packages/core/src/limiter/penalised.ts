import { RateLimitError } from '../errors.js'
import type { Rule } from '../rules/types.js'
import { validatePenalty } from '../rules/validate-penalty.js'
import type { Offences, Outcome, PenalisedOutcome, Penalty, Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
import type { RefuseRules } from './rule-set.js'
import { replyWithin } from './store-deadline.js'
import type { DenyReason, MaybePromise, Refusal, RuleDecision, Verdict } from './types.js'
import { combine, shown, storeDecision } from './verdict.js'

/**
 * Penalties, as a part of a limiter: reading a rule's `penalty` and the offences a store
 * answers. `createLimiter` and `rateLimit` have it; a middleware made by `createRateLimit` has it
 * when its parts name it (`createRateLimit({ algorithms, store: memoryStore, penalties })`), so
 * that one without penalised rules bundles none of it.
 */
export const penalties: PenaltyPart = {
  validate: validatePenalty,
  verdict: penalisedVerdict,
  checkStore: checkPenalisingStore,
  checkOne: checkPenalised,
  compile: storePenalty,
}

/** What penalties add to a limiter (see `penalties`). */
export type PenaltyPart = {
  readonly validate: typeof validatePenalty
  /** A request's verdict, from its decisions and the offences the store answered beside them. */
  readonly verdict: typeof penalisedVerdict
  /** Refuses, at start-up, a store that cannot keep offences (`refuse` names the rules). */
  readonly checkStore: (store: Store, refuse: RefuseRules) => void
  /** `limiter.check` on a rule with a penalty: its block and offences, as a request's. */
  readonly checkOne: typeof checkPenalised
  /** A rule's `penalty` as the store reads it, if it has one. */
  readonly compile: typeof storePenalty
}

/** A rule's `penalty` in the store's terms (see `Penalty`), if it has one. */
function storePenalty({ penalty }: Rule): Penalty | undefined {
  return (
    penalty && {
      blockMs: penalty.block,
      factor: penalty.factor,
      maxBlockMs: penalty.maxBlock,
      forgetAfterMs: penalty.forgetAfter,
    }
  )
}

/** `checkOne` for a rule with a penalty: its block and offences, as a request's. */
function checkPenalised(
  engine: Engine,
  rule: CompiledRule,
  key: string,
  cost: number,
  now: number,
  failed: (error: unknown) => RuleDecision,
): MaybePromise<RuleDecision> {
  const charge = { rule: rule.id, algorithm: rule.algorithm, key, cost, shadow: rule.shadow }
  const decisionOf = (outcome: PenalisedOutcome): RuleDecision => {
    try {
      const made = [storeDecision(rule, outcome?.decisions?.[0], cost, key)]
      penalisedVerdict([rule], made, outcome, outcome.at)
      return made[0]!
    } catch (error) {
      return failed(error)
    }
  }
  const result = engine.store.consumePenalised!([{ ...charge, penalty: rule.penalty }], now)
  return isPromiseLike(result)
    ? replyWithin(result, engine.storeTimeoutMs, 'consume').then(decisionOf, failed)
    : decisionOf(result)
}

function checkPenalisingStore(store: Store, refuse: RefuseRules): void {
  if (typeof store.consumePenalised === 'function') return
  refuse(
    'store',
    (rule) => rule.rule.penalty !== undefined,
    'penalise repeated denials (penalty), but the store has no consumePenalised method to keep offences (the Redis store does not yet): use the memory store, or remove penalty',
  )
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
 * The verdict of a request charged on penalised rules, from the store's decisions (`made`) and
 * the offences it answered beside them (`consumePenalised`'s `outcome.offences`), one per
 * charged decision (a missing-identity denial, with no key, charged nothing): the decision of
 * each enforcing rule whose penalty blocks the key at `at` becomes a blocked denial. `rules` and
 * `made` are in rule order. A block refuses the request (reason `blocked`), or refuses the client
 * outright once its offences reach the rule's `forbidAfter` (`forbidden`, with the 403's
 * `FORBIDDEN`). A reply that is not one throws `ERR_RL_STORE_REPLY`, for the rules'
 * `onStoreError` to decide.
 */
function penalisedVerdict(
  rules: readonly CompiledRule[],
  made: RuleDecision[],
  outcome: Outcome,
  at: number,
): Verdict {
  const offences = (outcome as PenalisedOutcome).offences
  let charged = 0
  for (const d of made) if (d.key !== undefined) charged++
  if (!Array.isArray(offences) || offences.length !== charged) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered ${Array.isArray(offences) ? offences.length : 'no'} offence records for ${charged} charges`,
    )
  }
  let reason: DenyReason | undefined
  let n = 0
  for (let i = 0; i < rules.length; i++) {
    if (made[i]!.key === undefined) continue
    const rule = rules[i]!
    const record = offences[n++] as Offences | undefined
    if (rule.penalty === undefined || record === undefined || record === null) continue
    const { count, blockedUntil } = checkOffences(rule, record)
    if (rule.shadow || blockedUntil <= at) continue
    made[i] = blockedDecision(made[i]!, blockedUntil, count, at)
    // Read from the rule as written: only a blocked client's reply needs it.
    const forbidAfter = rule.rule.penalty?.forbidAfter
    if (forbidAfter !== undefined && count >= forbidAfter) reason = 'forbidden'
    else reason ??= 'blocked'
  }
  const verdict = combine(made, at, reason)
  return reason === 'forbidden' ? { ...verdict, refusal: FORBIDDEN } : verdict
}

/** A forbidden client's 403. The block still ends: `retryAfter` (and `Retry-After`) say when. */
const FORBIDDEN: Refusal = {
  detail: 'Blocked after repeated requests over the rate limit.',
  code: 'penalty-forbidden',
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
