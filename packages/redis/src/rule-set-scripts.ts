import { createHash } from 'node:crypto'
import { RateLimitError } from '@tollgate/core/store'
import { type Script, script } from './scripts/index.js'
import { type RuleSetShape, requestKeyPlaces, ruleSetLua } from './scripts/rule-set.lua.js'

/**
 * The two scripts of one rule set (rule-set.lua.ts): `one` decides a single request with no
 * loop around it, `many` a batch of requests, in order. Both reply alike.
 */
export type RuleSetScripts = {
  readonly one: Script
  readonly many: Script
  /**
   * The keys a request's call reads: one per rule, but one for all the rules whose states share
   * the identity value. What a batch is sized by (coalesce.ts).
   */
  readonly keysRead: number
  /**
   * Which of a request's keys (one per charge, in order) it sends, by charge index: the
   * identity's once, at its first rule's place (requestKeyPlaces); undefined when all of them.
   */
  readonly sent: readonly number[] | undefined
}

/**
 * Rule sets a store makes scripts for, at most. Each distinct set of rules (algorithms,
 * parameters, shadow flags, in order) gets its own two, and Redis keeps every loaded script
 * until `SCRIPT FLUSH`; rules come from configuration, so this bound is only reached by an app
 * that builds algorithms per request, whose requests then take the general script.
 */
export const MAX_RULE_SETS = 256

/** The rule-set scripts a store has made, by source, so that equal rules share one script. */
export class ScriptBook {
  // By source, so that equal rules share one script (and one batch of requests).
  private readonly bySource = new Map<string, RuleSetScripts>()
  private readonly clock: { readonly serverTime: boolean; readonly marginMs: number }

  constructor(clock: { readonly serverTime: boolean; readonly marginMs: number }) {
    this.clock = clock
  }

  /** The scripts of a set of rules, made on first use; undefined past MAX_RULE_SETS. */
  of(rules: RuleSetShape['rules']): RuleSetScripts | undefined {
    const source = ruleSetLua({ rules, ...this.clock, requests: 'many' })
    let found = this.bySource.get(source)
    if (found === undefined && this.bySource.size < MAX_RULE_SETS) {
      const { sent } = requestKeyPlaces(rules)
      found = {
        one: script(ruleSetLua({ rules, ...this.clock, requests: 'one' })),
        many: script(source),
        keysRead: sent.length,
        sent: sent.length === rules.length ? undefined : sent,
      }
      this.bySource.set(source, found)
    }
    return found
  }

  /** Every script made so far, one-rule scripts included, both shapes. */
  all(): readonly Script[] {
    return [...this.bySource.values()].flatMap(({ one, many }) => [one, many])
  }
}

/** A rule's field in the identity value (see `ruleFields`). */
export type RuleFields = { of(rule: string): number }

/**
 * Each rule's field in the identity value: the first 4 bytes of the SHA-1 of its id, so every
 * process finds a rule's state at the same field whatever its other rules. Two rule ids of
 * this store with the same field are refused (1 chance in 4 billion for a pair).
 */
export function ruleFields(): RuleFields {
  const byRule = new Map<string, number>()
  const byField = new Map<number, string>()
  return {
    of(rule) {
      let field = byRule.get(rule)
      if (field === undefined) {
        // 0 means a key of its own to the scripts.
        field = createHash('sha1').update(rule).digest().readUInt32LE(0) || 1
        const other = byField.get(field)
        if (other !== undefined && other !== rule) {
          throw new RateLimitError(
            'ERR_RL_INVALID_RULE',
            `rules ${other} and ${rule} would share a field of the Redis identity layout: rename one`,
            { rule, field: 'id' },
          )
        }
        // Rule ids come from configuration, so these stay small; the bound is a safety net.
        if (byRule.size < 10_000) {
          byRule.set(rule, field)
          byField.set(field, rule)
        }
      }
      return field
    },
  }
}
