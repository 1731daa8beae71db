import { MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import type { CompiledRule } from './compile-rule.js'
import type { DenyReason, RuleDecision, Verdict } from './types.js'

const NONE: readonly RuleDecision[] = /* @__PURE__ */ Object.freeze([])

/** A store decision with the rule's name, mode, cost, policy and key (one object shape). */
function ruleDecision(
  rule: CompiledRule,
  decision: Decision,
  cost: number,
  key: string | undefined,
  storeFailed: boolean,
): RuleDecision {
  return {
    allowed: decision.allowed,
    remaining: decision.remaining,
    limit: decision.limit,
    resetAfterMs: decision.resetAfterMs,
    retryAfterMs: decision.retryAfterMs,
    delayMs: decision.delayMs,
    rule: rule.id,
    mode: rule.mode,
    cost,
    policy: rule.policy,
    key,
    storeFailed,
  }
}

/** A made-up denial: the store is down (`retryAfterMs` set) or an identity is missing (not set). */
export function denial(
  rule: CompiledRule,
  cost: number,
  key: string | undefined,
  retryAfterMs: number | undefined,
): RuleDecision {
  const decision: Decision = {
    allowed: false,
    remaining: 0,
    limit: rule.algorithm.limit,
    resetAfterMs: retryAfterMs ?? 0,
    retryAfterMs,
  }
  return ruleDecision(rule, decision, cost, key, retryAfterMs !== undefined)
}

/** A made-up admission (fail-open `check`): the figures of a fresh key. */
export function admission(rule: CompiledRule, cost: number, key: string): RuleDecision {
  const limit = rule.algorithm.limit
  const decision: Decision = {
    allowed: true,
    remaining: limit,
    limit,
    resetAfterMs: 0,
    retryAfterMs: undefined,
  }
  return ruleDecision(rule, decision, cost, key, true)
}

export function emptyVerdict(at: number, storeFailed = false): Verdict {
  return verdict(true, undefined, NONE, undefined, NONE, at, storeFailed)
}

/** The refusal of a client on the `denyList`: no rule decided it, so no decision. */
export function listedDenial(at: number): Verdict {
  return verdict(false, 'deny-list', NONE, undefined, NONE, at, false)
}

/**
 * The verdict of one rule's decision: the common case, without loops or calls. The same fields,
 * in the same order, as `verdict` makes: every verdict shares one object shape.
 */
export function singleVerdict(decision: RuleDecision, at: number): Verdict {
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

/**
 * Combines decisions (in rule order): denied if any enforcing rule denies. The deciding decision
 * is, when denied, the denying enforcing one with the longest retry, else the enforcing one with
 * the fewest remaining; the first wins ties.
 */
export function combine(
  decisions: readonly RuleDecision[],
  at: number,
  reason: DenyReason = 'limit',
  storeFailed = false,
): Verdict {
  let denying: RuleDecision | undefined
  let tightest: RuleDecision | undefined
  let shadowDenied: RuleDecision[] | undefined
  // A queued request waits for the latest slot among its enforcing queue rules.
  let wait = 0
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i]!
    if (d.mode === 'shadow') {
      if (d.allowed) continue
      if (shadowDenied === undefined) shadowDenied = [d]
      else shadowDenied.push(d)
    } else if (!d.allowed) {
      if (denying === undefined || (d.retryAfterMs ?? 0) > (denying.retryAfterMs ?? 0)) denying = d
    } else {
      if (tightest === undefined || d.remaining < tightest.remaining) tightest = d
      if (d.delayMs !== undefined && d.delayMs > wait) wait = d.delayMs
    }
  }
  const allowed = denying === undefined
  return verdict(
    allowed,
    allowed ? undefined : reason,
    decisions,
    denying ?? tightest,
    shadowDenied ?? NONE,
    at,
    storeFailed,
    allowed && wait > 0 ? wait : undefined,
  )
}

function verdict(
  allowed: boolean,
  reason: DenyReason | undefined,
  decisions: readonly RuleDecision[],
  deciding: RuleDecision | undefined,
  shadowDenied: readonly RuleDecision[],
  at: number,
  storeFailed: boolean,
  waitMs: number | undefined = undefined,
): Verdict {
  // Every field declared here, `slotsReleased` too: marking a release changes no object's shape.
  return {
    allowed,
    reason,
    decisions,
    deciding,
    shadowDenied,
    at,
    storeFailed,
    waitMs,
    slotsReleased: undefined,
  }
}

/**
 * A store's decision for one rule, copied into the limiter's own object and checked. Throws
 * `ERR_RL_STORE_REPLY` unless it has what the verdict and the responder read: they would
 * otherwise fail later, on the response path, as a 500 that no `onStoreError` decides. A few
 * comparisons per decision; nothing more is allocated or called unless the decision is bad.
 */
export function storeDecision(
  rule: CompiledRule,
  reply: unknown,
  cost: number,
  key: string,
): RuleDecision {
  if (typeof reply !== 'object' || reply === null) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered ${shown(reply)} for rule "${rule.id}", expected a decision`,
      { rule: rule.id },
    )
  }
  // As `ruleDecision` makes it (the same fields, in the same order), written out: this runs for
  // every decision the store makes.
  const decision = reply as Decision
  const d: RuleDecision = {
    allowed: decision.allowed,
    remaining: decision.remaining,
    limit: decision.limit,
    resetAfterMs: decision.resetAfterMs,
    retryAfterMs: decision.retryAfterMs,
    delayMs: decision.delayMs,
    rule: rule.id,
    mode: rule.mode,
    cost,
    policy: rule.policy,
    key,
    storeFailed: false,
  }
  // Counts the responder sends as they are (no NaN, no text, no fraction, not too large), and
  // waits in ms (sent in whole seconds, so any safe whole number fits). Only a denial's wait is
  // read (Retry-After, the RateLimit field's t); a queue rule's admission waits `delayMs`.
  const usable =
    typeof d.allowed === 'boolean' &&
    Number.isInteger(d.remaining) &&
    d.remaining >= 0 &&
    d.remaining <= MAX_FIELD_INTEGER &&
    Number.isInteger(d.limit) &&
    d.limit >= 0 &&
    d.limit <= MAX_FIELD_INTEGER &&
    Number.isSafeInteger(d.resetAfterMs) &&
    d.resetAfterMs >= 0 &&
    (d.allowed || (Number.isSafeInteger(d.retryAfterMs) && d.retryAfterMs! >= 0)) &&
    (d.delayMs === undefined || (Number.isSafeInteger(d.delayMs) && d.delayMs >= 0))
  if (!usable) refuseStoreDecision(d)
  return d
}

/** Throws the error naming the first field of a store decision that `storeDecision` refused. */
function refuseStoreDecision(decision: RuleDecision): never {
  const field = unusableField(decision)
  const expected =
    field === 'allowed'
      ? 'true or false'
      : `a whole number from 0 to ${field === 'remaining' || field === 'limit' ? MAX_FIELD_INTEGER : Number.MAX_SAFE_INTEGER}`
  throw new RateLimitError(
    'ERR_RL_STORE_REPLY',
    `the store's decision for rule "${decision.rule}" has ${field} ${shown(decision[field])}, expected ${expected}`,
    { rule: decision.rule, field },
  )
}

function unusableField(decision: RuleDecision): keyof Decision {
  if (typeof decision.allowed !== 'boolean') return 'allowed'
  if (!isCount(decision.remaining)) return 'remaining'
  if (!isCount(decision.limit)) return 'limit'
  if (!isDuration(decision.resetAfterMs)) return 'resetAfterMs'
  if (!decision.allowed && !isDuration(decision.retryAfterMs)) return 'retryAfterMs'
  return 'delayMs'
}

function isCount(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_FIELD_INTEGER
}

function isDuration(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/** A bad value for an error message; never throws, whatever the store put there. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'object' && value !== null) return 'an object'
  return typeof value === 'function' ? 'a function' : String(value)
}
