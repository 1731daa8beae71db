import { describe, expect, it } from 'vitest'
import { defineRules } from './define-rules.js'
import { parseRules } from './parse-rules.js'
import { bucket, code, expectOne, file, fileBucket, log } from './test-fixtures.js'
import type { RuleConfig, WindowRule } from './types.js'

describe('rule parameters', () => {
  it('accepts valid rules in both shapes', () => {
    expect(defineRules([bucket as never, { ...log, id: 'l' } as never])).toHaveLength(2)
    expect(parseRules([fileBucket])).toHaveLength(1)
  })

  it('refuses an unknown algorithm, suggesting the closest name', () => {
    expectOne(
      code({ ...bucket, algorithm: 'token_buket' }),
      'algorithm',
      'did you mean "token_bucket"',
    )
    expectOne(
      code({ ...bucket, algorithm: 'magic' }),
      'algorithm',
      /unknown algorithm "magic"; known algorithms: token_bucket/,
    )
    expectOne(code({ ...bucket, algorithm: undefined }), 'algorithm', 'required')
  })

  it('reads sliding_counter as sliding_window', () => {
    const [rule] = defineRules([{ ...log, algorithm: 'sliding_counter' } as never])
    expect(rule?.algorithm).toBe('sliding_window')
  })

  it('refuses contradictory parameters: a window rule given a burst, a rate rule given a window', () => {
    expectOne(code({ ...log, burst: 5 }), 'burst', 'not used by sliding_log')
    expectOne(code({ ...bucket, window: '1m' }), 'window', 'not used by token_bucket')
    expectOne(
      file({ ...log, window: undefined, window_s: 60, rate_per_s: 1 }),
      'rate_per_s',
      'not used by sliding_log',
    )
  })

  it('refuses missing parameters: a rate rule without a burst, a window rule without a window', () => {
    expectOne(code({ ...bucket, burst: undefined }), 'burst', 'required by token_bucket')
    expectOne(code({ ...log, window: undefined }), 'window', 'required by sliding_log')
    expectOne(
      file({ ...fileBucket, rate_per_s: undefined }),
      'rate_per_s',
      'required by token_bucket',
    )
  })

  it('refuses a burst or a limit below 1, and rates that are not whole', () => {
    expectOne(code({ ...bucket, burst: 0 }), 'burst', 'expected a whole number ≥ 1, got 0')
    expectOne(code({ ...log, limit: -3 }), 'limit', 'got -3')
    expectOne(code({ ...bucket, rate: 2.5 }), 'rate', 'got 2.5')
    expectOne(file({ ...fileBucket, rate_per_s: 0.5 }), 'rate_per_s', 'rate: 1, period_s: 2')
    expectOne(file({ ...fileBucket, period_s: 1 }), 'rate_per_s', 'not both')
  })

  it('refuses zero, negative and malformed windows and periods', () => {
    expectOne(
      code({ ...log, window: '0s' }),
      'window',
      'expected a duration > 0 in whole ms, got "0s"',
    )
    expectOne(code({ ...log, window: '-1000ms' }), 'window', "such as '500ms'")
    expectOne(code({ ...log, window: 'a minute' }), 'window', "such as '500ms'")
    expectOne(
      code({ ...log, window: '1.5ms' }),
      'window',
      'expected a duration > 0 in whole ms, got "1.5ms"',
    )
    expectOne(
      code({ ...bucket, period: '0.0001s' }),
      'period',
      'expected a duration > 0 in whole ms, got "0.0001s"',
    )
    const fileLog = { ...log, window: undefined }
    expectOne(file({ ...fileLog, window_s: 0 }), 'window_s', 'seconds > 0')
    expectOne(file({ ...fileLog, window_s: -60 }), 'window_s', 'got -60')
    expectOne(file({ ...fileLog, window_s: '60' }), 'window_s', 'got "60"')
    expectOne(file({ ...fileLog, window_s: Number.POSITIVE_INFINITY }), 'window_s', 'got Infinity')
    expectOne(file({ ...fileLog, window_s: Number.NaN }), 'window_s', 'got NaN')
  })

  it('refuses a bare number of ms or s, in code and in files, with the unit to write', () => {
    for (const window of [60, 0, 1.5]) {
      expectOne(code({ ...log, window }), 'window', `write '${window}s' or '${window}ms'`)
    }
    expectOne(code({ ...bucket, period: 1 }), 'period', "write '1s' or '1ms'")
    const fileLog = { ...log, window: undefined }
    expectOne(file({ ...fileLog, window: 60 }), 'window', "write '60s'")
    expectOne(file({ ...fileLog, window: '60s', window_s: 60 }), 'window', 'not both')
    expectOne(file({ ...fileBucket, rate_per_s: undefined, rate: 1, period: 2 }), 'period', "'2s'")
  })

  it('reads durations with their unit the same in code and in files', () => {
    const fileLog = { ...log, window: undefined }
    const inCode = defineRules([{ ...log, window: '90s' } as RuleConfig])
    expect(parseRules([{ ...fileLog, window: '90s' }])).toEqual(inCode)
    expect(parseRules([{ ...fileLog, window_s: 90 }])).toEqual(inCode)
    const rate = { ...fileBucket, rate_per_s: undefined, rate: 1 }
    expect(parseRules([{ ...rate, period: '2s' }])).toEqual(parseRules([{ ...rate, period_s: 2 }]))
  })

  it('takes a validated rule as it is, and validates a copy anew', () => {
    const [validated] = defineRules([log as RuleConfig])
    expect((validated as WindowRule).window).toBe(60_000)
    expect(defineRules([validated!])).toEqual([validated])
    expectOne(code({ ...validated! }), 'window', "write '60000s' or '60000ms'")
  })

  it('passes the algorithm factories’ own checks on, under the rule and field', () => {
    expectOne(code({ ...log, limit: 100_001 }), 'limit', 'use sliding_window for large limits')
    expectOne(code({ ...bucket, burst: 2 ** 49, period: '1h' }), 'burst', 'too large for this rate')
  })

  it('names what every object inherits (constructor, __proto__) as unknown fields, not as functions', () => {
    for (const field of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const inFile = file(
        JSON.parse(
          `{ ${JSON.stringify(field)}: 1, "id": "r", "match": { "identity": "ip" }, "algorithm": "token_bucket", "rate_per_s": 1, "burst": 1 }`,
        ),
      )
      const inCode = code(
        JSON.parse(
          `{ ${JSON.stringify(field)}: 1, "id": "r", "match": { "identity": "ip" }, "algorithm": "token_bucket", "rate": 1, "burst": 1 }`,
        ),
      )
      for (const issues of [inFile, inCode]) {
        expectOne(issues, field, 'unknown field')
        expect(issues[0]!.problem).not.toMatch(/function|object Object|native code/)
      }
    }
    expectOne(code({ ...log, window: '1constructor' }), 'window', "such as '500ms'")
    expectOne(code({ ...bucket, algorithm: 'constructor' }), 'algorithm', 'unknown algorithm')
  })

  it('refuses unknown fields, suggesting the closest known one', () => {
    expectOne(code({ ...bucket, brust: 20 }), 'brust', 'did you mean "burst"')
    expectOne(code({ ...bucket, rate_per_s: 10 }), 'rate_per_s', 'did you mean "rate"')
    expectOne(code({ ...bucket, cost_by_route: {} }), 'cost_by_route', 'did you mean "costByRoute"')
    // Every field a rules file spells its own way, in code: its code name meant.
    for (const [inFile, inCode] of [
      ['period_s', 'period'],
      ['window_s', 'window'],
      ['time_zone', 'timeZone'],
      ['max_wait_s', 'maxWait'],
      ['queue_order', 'queueOrder'],
      ['on_store_error', 'onStoreError'],
      ['on_missing_identity', 'onMissingIdentity'],
      ['on_change', 'onChange'],
    ]) {
      expectOne(code({ ...bucket, [inFile!]: 1 }), inFile!, `did you mean "${inCode}"`)
    }
    expectOne(
      file({ ...fileBucket, costByRoute: {} }),
      'costByRoute',
      'did you mean "cost_by_route"',
    )
    expectOne(file({ ...fileBucket, windowMs: 1 }), 'windowMs', 'did you mean "window_s"')
    expectOne(
      code({ ...bucket, zzz: 1 }),
      'zzz',
      'unknown field; known fields: id, description, match',
    )
    expectOne(
      code({ ...bucket, match: { identiy: 'ip', identity: 'ip' } }),
      'match.identiy',
      'did you mean "identity"',
    )
  })

  it('refuses duplicate ids, naming the first rule with the same id', () => {
    const issues = code(bucket, { ...log }, { ...bucket, id: 'other' })
    expect(issues).toEqual([
      {
        rule: 'r',
        field: 'id',
        problem: expect.stringContaining('duplicate id: rule #1 has it too'),
      },
    ])
  })

  it('refuses bad ids', () => {
    expect(code({ ...bucket, id: 'has space' })).toEqual([
      {
        rule: 'has space',
        field: 'id',
        problem: 'expected an id matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, got "has space"',
      },
    ])
    expect(code({ ...bucket, id: 42 })).toEqual([
      { rule: '#1', field: 'id', problem: expect.stringContaining('got 42') },
    ])
  })
})
