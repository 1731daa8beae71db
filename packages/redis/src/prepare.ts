import {
  type Algorithm,
  type CalendarWindows,
  type Charge,
  checkCost,
  RateLimitError,
} from '@tollgate/core/store'
import {
  algorithmPlans,
  type LeaseTerms,
  oneRuleScripts,
  type PlanOf,
  paramsOf,
  type Versioned,
} from './algorithm-plans.js'
import { encodeKey, encodeRule } from './keys.js'
import {
  MAX_RULE_SETS,
  type RuleFields,
  type RuleSetScripts,
  ruleFields,
  ScriptBook,
} from './rule-set-scripts.js'
import { CALENDAR_LENGTH_BASE } from './scripts/fixed-window.lua.js'
import type { Script } from './scripts/index.js'

// Named here too, beside MAX_RULES_PER_SCRIPT: both bound what a preparer makes scripts for.
export { MAX_RULE_SETS }

/**
 * Where states live: `'rule'`, a key per rule and identity (`<prefix>:<rule>:{<identity>}`);
 * `'identity'`, one value per identity (`<prefix>:{<identity>}`) holding the states of every
 * rule keyed on it (scripts/identity-value.ts), but for the rules whose state is not one short
 * string, which keep a key of their own.
 */
export type Layout = 'rule' | 'identity'

/** A charge ready for a general script call: its Redis key, hash tag and ARGV entries. */
export type PreparedCharge = {
  readonly key: string
  /** The hash tag contents (the encoded identity), for Redis Cluster slot grouping. */
  readonly tag: string
  /** [algorithm code, cost, shadow, p1, …, p5, field, carry] as the scripts read them. */
  readonly args: readonly string[]
  /**
   * Where its state lives: the key, or the key and the field in the identity value. Two charges
   * of one request on the same place charge one state.
   */
  readonly place: string
  /** A concurrency charge's lease number (its units' members in the set: see concurrency.lua.ts). */
  readonly lease?: number
}

/**
 * The most rules a rule-set script decides per request (its source grows with each, and Lua
 * allows a function 200 locals). A request charging more takes the general script.
 */
export const MAX_RULES_PER_SCRIPT = 8

export type ChargePreparer = {
  /**
   * Validates a charge and builds its key and arguments for the general scripts; a calendar
   * window's are those of the window holding `now` (the caller's clock). A concurrency charge
   * gets the next lease number, or `lease` (the one to give back).
   */
  prepare(charge: Charge, now: number, lease?: number): PreparedCharge
  /**
   * The time a refund or settle script compares with the state: a calendar window's charge is
   * sent as the start of its window, which the script cannot compute.
   */
  refundTime(charge: Charge, chargedAt: number): number
  /** Validates a charge and returns its Redis key. */
  keyOf(charge: Charge): string
  /** `keyOf` of each charge, a key repeated from the charge before it built once. */
  keysOf(charges: readonly Charge[]): string[]
  /** The store's layout. */
  readonly layout: Layout
  /** The one-rule scripts of the charge's algorithm, if it has them (call after `keyOf`). */
  oneRuleScript(charge: Charge): RuleSetScripts | undefined
  /**
   * The rule-set scripts of several charges (their algorithms and shadow flags, in order), if
   * they have them (call after `keyOf` on each).
   */
  ruleSetScript(charges: readonly Charge[]): RuleSetScripts | undefined
  /** Every rule-set script made so far, one-rule scripts included, both shapes. */
  ruleSetScripts(): readonly Script[]
  /**
   * Where a key's offences under a rule live (scripts/penalties.lua.ts), beside its state in
   * `stateKey`'s slot: in the identity layout the identity value, at a field of their own (0: a
   * key of its own), in the rule layout the key `<state key>:offences`.
   */
  offencesOf(charge: Charge, stateKey: string): { readonly key: string; readonly field: number }
}

/**
 * Validates charges and builds their keys and arguments, caching what depends only on rules:
 * the scripts made (by source), each algorithm's plan, each rule's field in the identity value.
 */
export function chargePreparer(
  prefix: string,
  clock: { readonly serverTime: boolean; readonly marginMs: number },
  leases: LeaseTerms,
  layout: Layout = 'rule',
  figured: ReadonlyMap<string, Versioned> = new Map(),
): ChargePreparer {
  const book = new ScriptBook(clock)
  const planOf = algorithmPlans(layout === 'identity', leases, book, figured)
  const fields = ruleFields()
  const { keyOf, keysOf } = chargeKeys(prefix, planOf)
  return {
    keyOf,
    keysOf,
    layout,
    oneRuleScript: oneRuleScripts(planOf, fields, book),
    ruleSetScript: knownSets(ruleSetsById(planOf, fields, book)),
    ruleSetScripts: () => book.all(),
    refundTime(charge, chargedAt) {
      const calendar = planOf(charge).calendar
      return calendar === undefined ? chargedAt : calendar.windowAt(chargedAt)[0]
    },
    prepare: chargeArgs(keyOf, planOf, fields),
    offencesOf(charge, stateKey) {
      if (layout === 'rule') return { key: `${stateKey}:offences`, field: 0 }
      // A name no rule of a rules file has (no NUL): the field's clash check covers it too.
      const field = fields.of(`${charge.rule}\u0000offences`)
      return { key: `${prefix}:{${encodeKey(charge.key)}}`, field }
    },
  }
}

/** `keyOf` and `keysOf`: a charge's key, once the charge is validated. */
function chargeKeys(prefix: string, planOf: PlanOf): Pick<ChargePreparer, 'keyOf' | 'keysOf'> {
  const identityKeyPrefix = `${prefix}:{`
  const ruleKeyPrefixes = new Map<string, string>()

  function ruleKeyPrefix(rule: string): string {
    let cached = ruleKeyPrefixes.get(rule)
    if (cached === undefined) {
      cached = `${prefix}:${encodeRule(rule)}:{`
      // Rule ids come from configuration, so this map stays small; the bound is a safety net.
      if (ruleKeyPrefixes.size < 10_000) ruleKeyPrefixes.set(rule, cached)
    }
    return cached
  }

  /** Validates a charge and returns its key up to the identity: `<prefix>:<rule>:{` or `<prefix>:{`. */
  function startOf(charge: Charge): string {
    checkCost(charge.cost)
    const plan = planOf(charge)
    if (charge.cost > charge.algorithm.limit) {
      throw new RateLimitError(
        'ERR_RL_COST_EXCEEDS_CAPACITY',
        `a cost of ${charge.cost} can never pass rule ${charge.rule}, whose capacity is ${charge.algorithm.limit}`,
        { rule: charge.rule, field: 'cost' },
      )
    }
    return plan.inIdentity ? identityKeyPrefix : ruleKeyPrefix(charge.rule)
  }

  return {
    keyOf: (charge) => `${startOf(charge)}${encodeKey(charge.key)}}`,
    /**
     * The Redis keys of a request's charges, each validated: a charge on the same identity value
     * (the same key, the same prefix) as the one before it gets the same string, built once.
     */
    keysOf(charges) {
      const keys: string[] = new Array(charges.length)
      let start = ''
      for (let i = 0; i < charges.length; i++) {
        const charge = charges[i]!
        const next = startOf(charge)
        keys[i] =
          i > 0 && next === start && charge.key === charges[i - 1]!.key
            ? keys[i - 1]!
            : `${next}${encodeKey(charge.key)}}`
        start = next
      }
      return keys
    },
  }
}

/** A set of rules a store has found the scripts of: what a request's charges are compared with. */
type KnownSet = {
  readonly algorithms: readonly Algorithm[]
  readonly rules: readonly string[]
  readonly shadows: readonly boolean[]
  readonly scripts: RuleSetScripts
}

/** Sets remembered per first algorithm (an app has a few per rule); others take the id's way. */
const KNOWN_SETS_PER_ALGORITHM = 16

type RuleSetScript = ChargePreparer['ruleSetScript']

/**
 * `ruleSetScript`: the sets of rules found before, by their first algorithm. A request compares
 * its charges' algorithms, shadow flags and rules with these (a few reference comparisons)
 * before it builds the set's id (a string per request) to look it up.
 */
function knownSets(byId: RuleSetScript): RuleSetScript {
  const setsByFirst = new WeakMap<Algorithm, KnownSet[]>()
  return (charges) => {
    if (charges.length > MAX_RULES_PER_SCRIPT) return undefined
    const known = setsByFirst.get(charges[0]!.algorithm)
    if (known !== undefined) {
      for (let i = 0; i < known.length; i++) {
        if (sameSet(known[i]!, charges)) return known[i]!.scripts
      }
    }
    const found = byId(charges)
    if (found !== undefined && (known?.length ?? 0) < KNOWN_SETS_PER_ALGORITHM) {
      const set: KnownSet = {
        algorithms: charges.map((charge) => charge.algorithm),
        rules: charges.map((charge) => charge.rule),
        shadows: charges.map((charge) => charge.shadow),
        scripts: found,
      }
      if (known === undefined) setsByFirst.set(charges[0]!.algorithm, [set])
      else known.push(set)
    }
    return found
  }
}

/** The charges are of the known set's rules, algorithms and shadow flags, in order. */
function sameSet(set: KnownSet, charges: readonly Charge[]): boolean {
  const { algorithms, rules, shadows } = set
  if (algorithms.length !== charges.length) return false
  for (let i = 0; i < charges.length; i++) {
    const charge = charges[i]!
    if (
      charge.algorithm !== algorithms[i] ||
      charge.rule !== rules[i] ||
      charge.shadow !== shadows[i]
    ) {
      return false
    }
  }
  return true
}

/**
 * The rule-set scripts of a request's charges by the ids and shadow flags of their algorithms
 * (and their fields in the identity value): what a request looks up.
 */
function ruleSetsById(planOf: PlanOf, fields: RuleFields, book: ScriptBook): RuleSetScript {
  // `null`: past the bound on scripts, so the general script serves that set (remembered, not
  // rebuilt).
  const ruleSets = new Map<string, RuleSetScripts | null>()
  return (charges) => {
    let id = ''
    for (const charge of charges) {
      const plan = planOf(charge)
      if (plan.calendar !== undefined || plan.leased || plan.carry !== '-1') return undefined
      const field = plan.inIdentity ? `:${fields.of(charge.rule)}` : ''
      id += `${plan.id}${charge.shadow ? 's' : ''}${field},`
    }
    const known = ruleSets.get(id)
    if (known !== undefined) return known ?? undefined
    // Sets of algorithm objects made per request would never repeat: stop remembering them.
    if (ruleSets.size >= MAX_RULE_SETS * 4) return undefined
    const found = book.of(
      charges.map((charge) => {
        const { lua, args, inIdentity } = planOf(charge)
        const field = inIdentity ? fields.of(charge.rule) : undefined
        return { algorithm: lua, params: paramsOf(args), shadow: charge.shadow, field }
      }),
    )
    ruleSets.set(id, found ?? null)
    return found
  }
}

/**
 * `prepare`: a charge's key, hash tag and arguments for the general scripts. Concurrency charges
 * are numbered here, one lease each.
 */
function chargeArgs(
  keyOf: ChargePreparer['keyOf'],
  planOf: PlanOf,
  fields: RuleFields,
): ChargePreparer['prepare'] {
  let leasesMade = 0
  return (charge, now, given) => {
    const key = keyOf(charge)
    const plan = planOf(charge)
    const [code, p1, p2, p3, p4, p5] =
      plan.calendar === undefined ? plan.args : calendarArgs(plan.args, plan.calendar, now)
    // The hash tag: what lies between the key's `{` and the closing `}`.
    const tag = key.slice(key.indexOf('{') + 1, -1)
    const head = [code!, String(charge.cost), charge.shadow ? '1' : '0', p1!, p2!, p3!, p4!]
    if (plan.inIdentity) {
      const field = String(fields.of(charge.rule))
      return { key, tag, args: [...head, p5!, field, plan.carry], place: `${key} ${field}` }
    }
    if (!plan.leased) return { key, tag, args: [...head, p5!, '0', plan.carry], place: key }
    // Whole numbers below 2^53, as every argument the scripts read.
    if (given === undefined) leasesMade = (leasesMade + 1) % Number.MAX_SAFE_INTEGER
    const lease = given ?? leasesMade
    return { key, tag, args: [...head, String(lease), '0', '-1'], place: key, lease }
  }
}

/**
 * [code, limit, b1, lengths, 0, 0] of a calendar window: the window holding `now` starts at b1, and its
 * length and the next window's, in whole seconds (boundaries are: zone offsets are), packed into
 * one integer (fixed-window.lua.ts reads them).
 */
function calendarArgs(
  args: readonly string[],
  calendar: CalendarWindows,
  now: number,
): readonly string[] {
  const [start, end] = calendar.windowAt(now)
  const next = calendar.windowAt(end)[1]
  const lengths = ((end - start) / 1000) * CALENDAR_LENGTH_BASE + (next - end) / 1000
  return [args[0]!, args[1]!, String(start), String(lengths), '0', '0']
}
