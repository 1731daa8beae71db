import { describe, expect, it } from 'vitest'
import { defineRules } from './define-rules.js'
import { loadRulesText } from './load-text.js'
import { parseRules } from './parse-rules.js'
import { code, expectOne, file } from './test-fixtures.js'

const slots = { id: 'r', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 4 }

describe('concurrency rules', () => {
  it('are read alike in code and in files, keyed or for the whole process', () => {
    const [keyed] = defineRules([slots as never])
    expect(keyed).toMatchObject({ algorithm: 'concurrency', limit: 4, cost: 1 })
    expect(keyed!.match.identity).toEqual(['ip'])
    expect(parseRules([slots])).toEqual([keyed])
    const [whole] = loadRulesText(
      'rules:\n  - id: reports\n    match: { route: GET /reports/* }\n    algorithm: concurrency\n    limit: 2\n',
      'yaml',
    )
    expect(whole!.match).toEqual({ identity: [], route: ['GET /reports/*'] })
    const composite = defineRules([{ ...slots, match: { identity: ['api_key', 'ip'] } } as never])
    expect(composite[0]!.match.identity).toEqual(['api_key', 'ip'])
  })

  it('need a limit, a whole number from 1', () => {
    expectOne(code({ ...slots, limit: undefined }), 'limit', 'required by concurrency')
    expectOne(code({ ...slots, limit: 0 }), 'limit', 'expected a whole number ≥ 1, got 0')
    expectOne(file({ ...slots, limit: 1.5 }), 'limit', 'expected a whole number ≥ 1, got 1.5')
  })

  it('refuse the fields of rules over time, naming the field', () => {
    expectOne(code({ ...slots, window: '1m' }), 'window', 'not used by concurrency')
    expectOne(code({ ...slots, burst: 2 }), 'burst', 'not used by concurrency')
    expectOne(file({ ...slots, window_s: 60 }), 'window_s', 'not used by concurrency')
    expectOne(file({ ...slots, rate_per_s: 1 }), 'rate_per_s', 'not used by concurrency')
  })

  it('refuse a cost above the limit, and an identity only rules over time may leave out', () => {
    expectOne(code({ ...slots, cost: 5 }), 'cost', /5/)
    expectOne(
      code({ id: 'r', match: {}, algorithm: 'token_bucket', rate: 1, burst: 1 }),
      'match.identity',
      'required',
    )
    expect(code({ ...slots, algorithm: 'concurency' })[0]!.problem).toMatch(
      'did you mean "concurrency"',
    )
  })

  it('take a line to wait in, alike in code and in files, and check each of its fields', () => {
    const [coded] = defineRules([
      { ...slots, queue: 8, maxWait: '5s', queueOrder: 'lifo' } as never,
    ])
    expect(coded).toMatchObject({ queue: 8, maxWait: 5000, queueOrder: 'lifo' })
    expect(parseRules([{ ...slots, queue: 8, max_wait_s: 5, queue_order: 'lifo' }])).toEqual([
      coded,
    ])
    const [yaml] = loadRulesText(
      'rules:\n  - id: r\n    match: { identity: ip }\n    algorithm: concurrency\n    limit: 4\n    queue: 8\n    max_wait: 5s\n    queue_order: lifo\n',
      'yaml',
    )
    expect(yaml).toEqual(coded)
    expectOne(code({ ...slots, queue: -1 }), 'queue', 'expected a whole number ≥ 0')
    expectOne(file({ ...slots, queue: 'many' }), 'queue', 'expected a whole number ≥ 0')
    expectOne(code({ ...slots, queue: 2, queueOrder: 'oldest' }), 'queueOrder', '"fifo" or "lifo"')
    expectOne(file({ ...slots, queue: 2, queue_order: 3 }), 'queue_order', '"fifo" or "lifo"')
    expectOne(code({ ...slots, queue: 2, maxWait: 'soon' }), 'maxWait', /soon/)
    expectOne(code({ ...slots, queue: 2, maxWait: '0s' }), 'maxWait', /at least 1 ms|expected/)
    // Without a line there is nothing to wait for.
    expectOne(code({ ...slots, maxWait: '5s' }), 'maxWait', 'give queue too')
    expectOne(file({ ...slots, queue_order: 'fifo' }), 'queue_order', 'give queue too')
    // A line is a concurrency rule's; the leaky queue's knobs are not.
    expectOne(
      code({
        id: 'r',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 1,
        queue: 2,
      }),
      'queue',
      'not used by token_bucket',
    )
    expectOne(code({ ...slots, queue: 2, delay: 1 }), 'delay', 'not used by concurrency')
  })
})
