// Rules checked against a table of algorithms: the fields only some algorithms take are read by
// the readers their factories carry, and refused on every other algorithm.
import { describe, expect, it } from 'vitest'
import { fixedWindow } from '../algorithms/fixed-window.js'
import type { WindowParams } from '../algorithms/params.js'
import type { OwnField, RuleFieldReader } from '../algorithms/rule-fields.js'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { tokenBucket } from '../algorithms/token-bucket.js'
import type { AlgorithmName } from '../algorithms/types.js'
import { checkRules } from './define-rules.js'
import { code, expectOne, issuesOf, log } from './test-fixtures.js'
import { ROUTES } from './validate-routes.js'

const OWN_VALUES: Readonly<Record<OwnField, unknown>> = {
  delay: 1,
  nodelay: true,
  maxWait: '1s',
  queue: 2,
  queueOrder: 'lifo',
  timeZone: 'UTC',
  buckets: 2,
}

const ruleOf = (name: string) =>
  ['token_bucket', 'gcra', 'leaky_bucket', 'leaky_queue'].includes(name)
    ? { id: 'r', match: { identity: 'ip' }, algorithm: name, rate: 2, burst: 4 }
    : name === 'concurrency'
      ? { id: 'r', match: { identity: 'ip' }, algorithm: name, limit: 4, queue: 2 }
      : {
          id: 'r',
          match: { identity: 'ip' },
          algorithm: name,
          limit: 4,
          // A calendar window, where one is taken: the fixed window's zone is read with it.
          window: name === 'fixed_window' ? 'day' : '1m',
        }

describe('an algorithm’s own fields', () => {
  it('are refused, naming the field, on every algorithm whose factory does not read them', () => {
    for (const [name, factory] of Object.entries(BUILT_IN_ALGORITHMS)) {
      const reader = (factory as { ruleFields?: RuleFieldReader }).ruleFields
      for (const [field, value] of Object.entries(OWN_VALUES)) {
        if (reader?.takes.includes(field as OwnField)) continue
        expectOne(code({ ...ruleOf(name), [field]: value }), field, /./)
      }
    }
  })

  it('are read by the algorithm that takes them', () => {
    const taken = Object.entries(BUILT_IN_ALGORITHMS).flatMap(([name, factory]) =>
      ((factory as { ruleFields?: RuleFieldReader }).ruleFields?.takes ?? []).map(
        (field) => [name as AlgorithmName, field] as const,
      ),
    )
    expect(taken.map(([, field]) => field).sort()).toEqual([
      'buckets',
      'delay',
      'maxWait',
      'maxWait',
      'nodelay',
      'queue',
      'queueOrder',
      'timeZone',
    ])
  })
})

describe('a table without the algorithm a rule names', () => {
  it('refuses the rule for that alone, naming the algorithm to add', () => {
    const issues = issuesOf(() =>
      checkRules(
        [{ ...log, burst: 5 } as never],
        { token_bucket: tokenBucket },
        { routes: ROUTES },
      ),
    )
    expect(issues).toEqual([
      {
        rule: 'r',
        field: 'algorithm',
        problem: 'sliding_log is not in the algorithms option: add it',
      },
    ])
  })

  it('gives a factory of the app’s own the figures, and refuses the fields only a built-in reads', () => {
    const table = { fixed_window: (params: WindowParams) => fixedWindow(params) }
    const check = (extra: object) =>
      checkRules([{ ...log, algorithm: 'fixed_window', ...extra } as never], table, {
        routes: ROUTES,
      })
    expect(check({})[0]).toMatchObject({ limit: 5, window: 60_000 })
    expect(check({ window: 'month' })[0]).toMatchObject({ window: 'month' })
    expectOne(
      issuesOf(() => check({ window: 'month', timeZone: 'UTC' })),
      'timeZone',
      'not used by fixed_window',
    )
  })
})
