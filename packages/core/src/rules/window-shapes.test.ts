// Calendar windows and sub-window counters, in code and in rule files: accepted in the model,
// compiled to the algorithm, and refused with the rule and the field when they do not fit.
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { defineRules } from './define-rules.js'
import { loadRulesText } from './load-text.js'
import { parseRules } from './parse-rules.js'
import { code, expectOne, file } from './test-fixtures.js'
import type { WindowRule } from './types.js'
import { algorithmOf } from './validate-rule.js'

const base = { id: 'r', match: { identity: 'api_key' } }
const monthly = { ...base, algorithm: 'fixed_window', limit: 1_000_000, window: 'month' }
const perMinute = { ...base, algorithm: 'sliding_window', limit: 100, window: '1m' }

describe('calendar windows', () => {
  it('are read in code and in files alike, the zone named as the runtime names it', () => {
    const [inCode] = defineRules([{ ...monthly, timeZone: 'europe/paris' } as never])
    const [inFile] = parseRules([{ ...monthly, time_zone: 'Europe/Paris' }])
    expect(inCode).toMatchObject({ window: 'month', timeZone: 'Europe/Paris' })
    expect(inFile).toEqual(inCode)
    const [utc] = defineRules([monthly as never])
    expect(utc).toMatchObject({ window: 'month' })
    expect(utc).not.toHaveProperty('timeZone')
  })

  it('compile to a fixed window that resets on the first of the next month', () => {
    const [rule] = defineRules([{ ...monthly, limit: 2 } as never])
    const algorithm = algorithmOf(rule!, BUILT_IN_ALGORITHMS)
    const state = [0, 0]
    const jan31 = Date.UTC(2026, 0, 31, 23)
    algorithm.init(state, 0, jan31)
    algorithm.decide(state, 0, 2, jan31, true)
    const denied = algorithm.decide(state, 0, 1, jan31, true)
    // One hour to 1 February 00:00 UTC.
    expect(denied).toMatchObject({
      allowed: false,
      retryAfterMs: 3_600_000,
      resetAfterMs: 3_600_000,
    })
  })

  it('take every unit from a YAML file', () => {
    const rules = loadRulesText(
      `
rules:
  - { id: daily, match: { identity: ip }, algorithm: fixed_window, limit: 1000, window: day }
  - { id: weekly, match: { identity: ip }, algorithm: fixed_window, limit: 5000, window: week, time_zone: America/New_York }
  - { id: monthly, match: { identity: ip }, algorithm: fixed_window, limit: 20000, window: month }
  - { id: yearly, match: { identity: ip }, algorithm: fixed_window, limit: 200000, window: year, time_zone: Asia/Tokyo }
`,
      'yaml',
    )
    expect(rules.map((rule) => (rule as WindowRule).window)).toEqual([
      'day',
      'week',
      'month',
      'year',
    ])
    expect(rules.map((rule) => (rule as WindowRule).timeZone)).toEqual([
      undefined,
      'America/New_York',
      undefined,
      'Asia/Tokyo',
    ])
  })

  it('refuse an unknown zone, a zone without a calendar window, and a calendar window on another algorithm', () => {
    expectOne(
      code({ ...monthly, timeZone: 'Europe/Pariss' }),
      'timeZone',
      'unknown time zone "Europe/Pariss"',
    )
    expectOne(file({ ...monthly, time_zone: 42 }), 'time_zone', 'expected an IANA time zone name')
    expectOne(
      code({ ...monthly, window: '30d', timeZone: 'UTC' }),
      'timeZone',
      'only for a calendar window (window: day, week, month or year); remove it',
    )
    expectOne(
      code({ ...perMinute, window: 'month' }),
      'window',
      `expected a duration such as '500ms', '60s' or '1h', got "month"`,
    )
    expectOne(
      code({ ...base, algorithm: 'token_bucket', rate: 1, burst: 1, timeZone: 'UTC' }),
      'timeZone',
      'not used by token_bucket',
    )
    expectOne(
      code({ ...monthly, window: 'fortnight' }),
      'window',
      "expected a duration such as '500ms'",
    )
    expectOne(
      file({ ...monthly, window: undefined, window_s: 'month' }),
      'window_s',
      'a number of seconds',
    )
  })

  it('suggest timeZone for a file field written in code, and time_zone the other way', () => {
    expectOne(code({ ...monthly, time_zone: 'UTC' }), 'time_zone', 'timeZone')
    expectOne(file({ ...monthly, timeZone: 'UTC' }), 'timeZone', 'time_zone')
  })
})

describe('sub-window counters', () => {
  it('are an option of the sliding window, in code and in files', () => {
    const [inCode] = defineRules([{ ...perMinute, buckets: 60 } as never])
    const [inFile] = parseRules([{ ...perMinute, window: undefined, window_s: 60, buckets: 60 }])
    expect(inCode).toMatchObject({ algorithm: 'sliding_window', window: 60_000, buckets: 60 })
    expect(inFile).toEqual(inCode)
    expect(algorithmOf(inCode!, BUILT_IN_ALGORITHMS).stateSize).toBe(61)
  })

  it('refuse a count that is not whole, out of range, not dividing the window, or on another algorithm', () => {
    expectOne(code({ ...perMinute, buckets: 1.5 }), 'buckets', 'expected a whole number ≥ 1')
    expectOne(
      code({ ...perMinute, buckets: 1 }),
      'buckets',
      'from 2 to 100 (1 would be a fixed window)',
    )
    expectOne(code({ ...perMinute, buckets: 101 }), 'buckets', 'from 2 to 100')
    expectOne(
      code({ ...perMinute, window: '1s', buckets: 7 }),
      'buckets',
      '1000 ms does not divide by 7',
    )
    expectOne(
      code({ ...perMinute, algorithm: 'sliding_log', buckets: 6 }),
      'buckets',
      'not used by sliding_log',
    )
  })
})
