import { describe, expect, it } from 'vitest'
import { simulate } from './simulate.js'
import { parseTrace } from './trace.js'
import { TraceError } from './trace-error.js'

const rules = [
  { id: 'r', match: { identity: 'api_key' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
] as const

describe('parseTrace', () => {
  it('reads CSV with a header, bursts as count and every_ms, comments and blank lines skipped', () => {
    const text = '# a burst\nat_ms,key,cost,count,every_ms\n\n0,k1,2,1,\n500,k2,,3,100\n'
    expect(parseTrace(text, 'csv')).toEqual([
      { at: 0, key: 'k1', cost: 2 },
      { at: 500, key: 'k2' },
      { at: 600, key: 'k2' },
      { at: 700, key: 'k2' },
    ])
  })

  it('reads JSON lines, with the time in seconds', () => {
    const text =
      '{"at_s": 0.5, "key": "k", "method": "POST", "path": "/v1/login"}\n\n{"at_ms": 3}\n'
    expect(parseTrace(text, 'jsonl')).toEqual([
      { at: 500, key: 'k', method: 'POST', path: '/v1/login' },
      { at: 3 },
    ])
  })

  it.each([
    ['at_ms,kye\n0,k', 'csv', 'line 2: kye: unknown field'],
    ['at_ms,key\n0', 'csv', 'line 2: row: expected 2 cells'],
    ['key\nk', 'csv', 'line 2: at_ms: give the time as at_ms or at_s'],
    ['at_ms\n-5', 'csv', 'line 2: at_ms: expected a whole number ≥ 0, got -5'],
    ['at_ms\nsoon', 'csv', 'line 2: at_ms: expected a number, got "soon"'],
    ['at_ms,cost\n0,1.5', 'csv', 'line 2: cost: expected a whole number ≥ 0, got 1.5'],
    ['at_ms,count\n0,0', 'csv', 'line 2: count: expected a whole number ≥ 1, got 0'],
    ['', 'csv', 'line 1: header: no header row'],
    ['{"at_ms": 0}\n{"at_ms": 1,', 'jsonl', 'line 2: row: not valid JSON'],
    ['[1]', 'jsonl', 'line 1: row: expected an object per line'],
    ['{"at_ms": 0, "key": 7}', 'jsonl', 'line 1: key: expected a string, got 7'],
    ['{"at_ms": true}', 'jsonl', 'line 1: at_ms: expected a number, got true'],
  ] as const)('refuses %j (%s) naming the line and field', (text, format, message) => {
    expect(() => parseTrace(text, format)).toThrow(TraceError)
    expect(() => parseTrace(text, format)).toThrow(message)
  })
})

describe('simulate, refusing what it cannot replay', () => {
  it('names the arrival and field of a bad time, cost or key', () => {
    expect(() => simulate({ rules, arrivals: [{ at: 0 }, { at: -1 }] })).toThrow('arrival #2: at:')
    expect(() => simulate({ rules, arrivals: [{ at: 0, cost: 0.5 }] })).toThrow('arrival #1: cost:')
    expect(() => simulate({ rules, arrivals: [{ at: 0, key: '' }] })).toThrow('arrival #1: key:')
  })

  it('refuses a cost that could never pass, rather than counting it as a store failure', () => {
    expect(() => simulate({ rules, arrivals: [{ at: 0, cost: 3 }] })).toThrow(
      `arrival #1: cost: cost 3 exceeds rule "r"'s capacity of 2`,
    )
  })

  it('refuses rules as at start-up', () => {
    expect(() => simulate({ rules: [{ ...rules[0], burst: 0 }], arrivals: [] })).toThrow(
      'rule "r": burst:',
    )
    expect(() =>
      simulate({ rules: [{ ...rules[0], match: { identity: 'account' } }], arrivals: [] }),
    ).toThrow('account')
  })

  it('charges a trace cost under every matching rule, and reports it', () => {
    const run = simulate({
      rules,
      arrivals: [
        { at: 0, cost: 2 },
        { at: 0, cost: 1 },
      ],
    })
    expect(run.requests.map((r) => [r.allowed, r.decisions[0]!.cost])).toEqual([
      [true, 2],
      [false, 1],
    ])
  })

  it('reads state between arrivals at the interval asked, and refuses too many reads', () => {
    const run = simulate({ rules, arrivals: [{ at: 0 }, { at: 1000 }], sampleEveryMs: 250 })
    const reads = run.states.filter((s) => s.phase === 'read').map((s) => [s.at, s.remaining])
    expect(reads).toEqual([
      [0, 2],
      [250, 1],
      [500, 1],
      [750, 1],
      [1000, 2],
    ])
    expect(() =>
      simulate({ rules, arrivals: [{ at: 0 }, { at: 10_000_000 }], sampleEveryMs: 1 }),
    ).toThrow('sampleEveryMs')
  })
})
