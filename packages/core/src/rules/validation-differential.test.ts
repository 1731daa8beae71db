// Rule validation against the validation it replaced (old-validation/*.test-copy.ts, as it was at
// 8b52371), over generated rule sets, valid and invalid, in code and in files: the same models,
// or the same problems (which rule, which field, as many times); a text differs only where it
// was shortened on purpose (CHANGED), each listed in the changeset.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AlgorithmTable } from '../algorithms/table.js'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { tokenBucket } from '../algorithms/token-bucket.js'
import { checkRules, EVERY_READER } from './define-rules.js'
import type { RuleIssue } from './issues.js'
import { RuleValidationError } from './issues.js'
import {
  EVERY_READER as OLD_EVERY_READER,
  checkRules as oldCheckRules,
} from './old-validation/define-rules.test-copy.js'
import { parseRules as oldParseRules } from './old-validation/parse-rules.test-copy.js'
import type { RuleReaders as OldRuleReaders } from './old-validation/validate-rule.test-copy.js'
import { parseRules } from './parse-rules.js'
import { ROUTES } from './validate-routes.js'
import type { RuleReaders } from './validate-rule.js'

/** The old texts that were shortened or reworded on purpose; any other text must be the same. */
const CHANGED: readonly RegExp[] = [
  /^not used by /,
  /^required by /,
  /^only for /,
  /^sub-window counters are an option/,
  /^a time zone applies to a calendar window/,
  /^a calendar window \(/,
  /^a bare number has no unit/,
  /^expected a duration/,
  / is not a whole number of milliseconds$/,
  /^unknown field \(known: /,
  /^required, e\.g\. \{ identity: ip \}/,
  /^expected an object such as \{ identity: ip \}/,
  /^required: ip, api_key, user, another identity name/,
  /^a plan name cannot be empty$/,
  /^reserved identity name /,
  /^expected a string or a non-empty list of /,
  /^expected a string, got /,
  /^the list is empty/,
  /^expected a list of rules/,
  /^duplicate id: /,
  /^a cost of \d+ exceeds the rule's capacity/,
  /is not among the algorithms this limiter was given/,
  /^this limiter was composed without /,
  /^required: one of /,
  /^unknown algorithm .*; one of /,
  /^expected 1–64 letters/,
  /the largest a RateLimit field can carry/,
  /needs integers beyond 2\^53/,
  /^expected a whole number ≥ 1, got/,
  // Later: an unknown match method without the list of methods, an identity name malformed or
  // named twice.
  /^unknown method "[^"]*" \(known: /,
  /^bad identity name /,
  /^names an identity twice: /,
  /^expected an object of route → cost/,
  // A list or an object is now shown as JSON (`got [1]`), as options show values.
  /got (a list|an object)$/,
  /got (a list|an object);/,
  // A choice (mode, onStoreError…) refused as an option of one of its values is.
  /^expected "[^"]*"( or "[^"]*")+, got /,
  // A cost of a rule whose capacity is known: refused with the range it may take.
  /^expected a whole number ≥ 0, got /,
]

type Outcome = { readonly models?: unknown; readonly issues?: readonly RuleIssue[] }

function outcome(run: () => unknown): Outcome {
  try {
    return { models: run() }
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error
    return { issues: error.issues }
  }
}

/** How many generated sets each side accepted and refused: both must be common. */
const seen = { models: 0, issues: 0 }

function expectSame(before: Outcome, after: Outcome): void {
  seen[before.models === undefined ? 'issues' : 'models']++
  expect(after.models).toEqual(before.models)
  const where = (issues: readonly RuleIssue[] | undefined) =>
    (issues ?? []).map((issue) => `${issue.rule}\u0000${issue.field}`).sort()
  expect(where(after.issues)).toEqual(where(before.issues))
  // Each problem in the old order of its rule and field: a text changed only on purpose.
  for (const issue of before.issues ?? []) {
    if (CHANGED.some((changed) => changed.test(issue.problem))) continue
    const same = after.issues?.filter((i) => i.rule === issue.rule && i.field === issue.field)
    expect(same?.map((i) => i.problem)).toContain(issue.problem)
  }
}

const ALGORITHMS = [
  'token_bucket',
  'gcra',
  'leaky_bucket',
  'leaky_queue',
  'fixed_window',
  'sliding_log',
  'sliding_window',
  'concurrency',
] as const

const BASE: Readonly<Record<(typeof ALGORITHMS)[number], Record<string, unknown>>> = {
  token_bucket: { rate: 10, burst: 20 },
  gcra: { rate: 10, period: '1m', burst: 5 },
  leaky_bucket: { rate: 5, burst: 10 },
  leaky_queue: { rate: 10, burst: 20, delay: 5 },
  fixed_window: { limit: 100, window: 'day', timeZone: 'Europe/Paris' },
  sliding_log: { limit: 5, window: '60s' },
  sliding_window: { limit: 60, window: '1m', buckets: 6 },
  concurrency: { limit: 4, queue: 2, maxWait: '1s' },
}

/** Values for each field of a rule in code: good ones, bad ones, and none. */
const CODE_VALUES: Readonly<Record<string, readonly unknown[]>> = {
  id: ['r', 'a.b', '', 5, undefined, 'x'.repeat(65), 'r2'],
  description: ['d', 5],
  algorithm: [
    ...ALGORITHMS,
    'sliding_counter',
    'token_buket',
    'magic',
    undefined,
    5,
    'constructor',
  ],
  rate: [1, 10, 0, -1, 1.5, '5', 2 ** 53, 2 ** 40, undefined, [1]],
  burst: [1, 20, 0, 1.5, '20', 2 ** 40, undefined, 5000],
  limit: [1, 5, 0, -1, 1.5, 100_001, undefined, { n: 1 }],
  period: ['1s', '60s', '1m', 60, '0s', '1.5ms', 'day', null, undefined, '0.0001s'],
  window: ['1s', '60s', '1m', 60, '0s', 'day', 'month', 'fortnight', null, undefined, '7s'],
  delay: [0, 1, 30, -1, 'x', undefined],
  nodelay: [true, false, 'yes'],
  maxWait: ['1s', 0, '0s', '500ms', undefined, 5],
  queue: [0, 2, -1, 1.5, undefined],
  queueOrder: ['fifo', 'lifo', 'x'],
  timeZone: ['UTC', 'Europe/Paris', 'Europe/Pariss', 42, undefined],
  buckets: [2, 6, 7, 1, 0, 101, undefined],
  cost: [0, 1, 25, -1, 1.5, undefined],
  costByRoute: [{}, { 'GET /a': 2 }, { 'GET /a': 100 }, { bad: 1 }, [], 'x'],
  mode: ['enforce', 'shadow', 'dry'],
  onStoreError: ['open', 'closed', 'fallback', 'maybe'],
  onMissingIdentity: ['ip', 'deny', 'x'],
  onChange: ['keep', 'reset', 'half'],
  settle: [true, false, '10m', 5, 'soon'],
  penalty: [{ block: '1m' }, { block: 60 }, { blok: '1m' }, 'x', { block: '1m', factor: 0 }],
  version: [0, 1, -1, 1.5],
  match: [
    { identity: 'ip' },
    { identity: ['ip', 'api_key'] },
    { identity: ['ip', 'ip'] },
    {},
    undefined,
    'ip',
    ['ip'],
    { identity: 'ip', method: 'GET' },
    { identity: 'ip', method: ['get', 'FETCH'] },
    { identity: 'ip', route: 'GET /a' },
    { identity: 'ip', route: 'a' },
    { identity: 'ip', plan: '' },
    { identity: 'ip', plan: ['free', 3] },
    { identity: [1] },
    { identity: [] },
    { identity: 'a:b' },
    { identity: 'constructor' },
    { identiy: 'ip' },
    { identity: 'account' },
  ],
  brust: [1],
  window_s: [60],
  rate_per_s: [10],
  time_zone: ['UTC'],
  zzz: [1],
}

/** The same for a rule in a file (its own spellings, seconds). */
const FILE_VALUES: Readonly<Record<string, readonly unknown[]>> = {
  ...CODE_VALUES,
  rate_per_s: [1, 10, 0, 0.5, 1.5, '5', undefined],
  period_s: [1, 60, 0, -1, 0.0001, '1', undefined],
  window_s: [1, 60, 0, -60, '60', Number.NaN, undefined],
  max_wait_s: [1, 0, 0.5, undefined],
  time_zone: ['UTC', 'Europe/Pariss', 42],
  queue_order: ['fifo', 'x'],
  cost_by_route: [{}, { 'GET /a': 2 }, { bad: 1 }, []],
  on_store_error: ['open', 'fallback', 'maybe'],
  on_missing_identity: ['deny', 'x'],
  on_change: ['keep', 'half'],
  costByRoute: [{}],
  timeZone: ['UTC'],
  maxWait: ['1s'],
}

const FILE_BASE: Readonly<Record<string, Record<string, unknown>>> = {
  ...BASE,
  token_bucket: { rate_per_s: 10, burst: 20 },
  gcra: { rate: 10, period_s: 60, burst: 5 },
  leaky_queue: { rate_per_s: 10, burst: 20, max_wait_s: 1 },
  fixed_window: { limit: 100, window: 'month', time_zone: 'Europe/Paris' },
  sliding_log: { limit: 5, window_s: 60 },
  concurrency: { limit: 4, queue: 2, queue_order: 'lifo' },
}

function ruleArb(
  base: Readonly<Record<string, Record<string, unknown>>>,
  values: Readonly<Record<string, readonly unknown[]>>,
) {
  const fields = Object.keys(values)
  return fc
    .record({
      algorithm: fc.constantFrom(...ALGORITHMS),
      id: fc.constantFrom('a', 'b', 'c', 'a'),
      changes: fc.array(
        fc
          .constantFrom(...fields)
          .chain((field) => fc.tuple(fc.constant(field), fc.constantFrom(...values[field]!))),
        { maxLength: 4 },
      ),
    })
    .map(({ algorithm, id, changes }) => {
      const rule: Record<string, unknown> = {
        id,
        match: { identity: 'ip' },
        algorithm,
        ...base[algorithm],
      }
      for (const [field, value] of changes) rule[field] = value
      return rule
    })
}

/** Tables and readers: every part, and a limiter composed of the token bucket alone. */
const COMPOSITIONS: readonly [AlgorithmTable, RuleReaders, OldRuleReaders][] = [
  [BUILT_IN_ALGORITHMS, EVERY_READER, OLD_EVERY_READER],
  [{ token_bucket: tokenBucket }, { routes: ROUTES }, { routes: ROUTES }],
]

describe('rule validation, against the validation it replaced', () => {
  it('rules in code: the same models, or the same problems at the same rule and field', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb(BASE, CODE_VALUES), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...COMPOSITIONS),
        (rules, [table, readers, oldReaders]) => {
          expectSame(
            outcome(() => oldCheckRules(rules as never, table, oldReaders)),
            outcome(() => checkRules(rules as never, table, readers)),
          )
        },
      ),
      { numRuns: 3000 },
    )
    expect(seen.models).toBeGreaterThan(100)
    expect(seen.issues).toBeGreaterThan(300)
  })

  it('rules in files: the same models, or the same problems at the same rule and field', () => {
    fc.assert(
      fc.property(fc.array(ruleArb(FILE_BASE, FILE_VALUES), { maxLength: 3 }), (rules) => {
        expectSame(
          outcome(() => oldParseRules(rules)),
          outcome(() => parseRules(rules)),
        )
      }),
      { numRuns: 3000 },
    )
  })

  it('whole sets that are not lists of rules', () => {
    for (const items of [[], 'rules', 5, null, { rules: [] }, { rules: 'x' }, { rule: [] }]) {
      expectSame(
        outcome(() => oldCheckRules(items as never, BUILT_IN_ALGORITHMS, OLD_EVERY_READER)),
        outcome(() => checkRules(items as never, BUILT_IN_ALGORITHMS, EVERY_READER)),
      )
      expectSame(
        outcome(() => oldParseRules(items)),
        outcome(() => parseRules(items)),
      )
    }
  })
})
