// Queue rules (leaky_queue) in code and in rule files: nginx's knobs, validated like every rule.
import { describe, expect, it } from 'vitest'
import { defineRules } from './define-rules.js'
import { loadRulesText } from './load-text.js'
import { parseRules } from './parse-rules.js'
import { NGINX_QUEUE_YAML } from './spec-rules.fixture.js'
import { bucket, code, expectOne, file, fileBucket } from './test-fixtures.js'

const queue = { ...bucket, algorithm: 'leaky_queue' }
const fileQueue = { ...fileBucket, algorithm: 'leaky_queue' }
const defaults = { mode: 'enforce', cost: 1, onStoreError: 'open', onMissingIdentity: 'ip' }

describe('leaky_queue rules', () => {
  it('takes rate + burst, with delay 0 (shape everything) unless told otherwise', () => {
    const [rule] = defineRules([queue as never])
    expect(rule).toMatchObject({ algorithm: 'leaky_queue', rate: 10, period: 1000, burst: 20 })
    expect(rule).toMatchObject({ delay: 0 })
    expect(rule).not.toHaveProperty('maxWait')
  })

  it('reads nodelay as a delay of the whole burst, and maxWait as whole ms', () => {
    const [fast, bounded] = defineRules([
      { ...queue, nodelay: true } as never,
      { ...queue, id: 'b', delay: 10, maxWait: '1.5s' } as never,
    ])
    expect(fast).toMatchObject({ delay: 20 })
    expect(bounded).toMatchObject({ delay: 10, maxWait: 1500 })
    // A validated rule is taken back as it is.
    expect(defineRules([fast!, bounded!])).toEqual([fast, bounded])
  })

  it.each([
    [{ delay: 21 }, 'delay', 'from 0 to the burst (20), got 21'],
    [{ delay: -1 }, 'delay', 'expected a whole number ≥ 0, got -1'],
    [{ delay: '10' }, 'delay', 'expected a whole number ≥ 0, got "10"'],
    [{ nodelay: 'yes' }, 'nodelay', 'expected true or false'],
    [{ nodelay: true, delay: 3 }, 'delay', 'give delay (how many are served at once) or nodelay'],
    [{ maxWait: 500 }, 'maxWait', 'a bare number has no unit'],
    [{ maxWait: '0s' }, 'maxWait', 'expected a duration > 0'],
  ])('refuses %o, naming %s', (extra, field, problem) => {
    expectOne(code({ ...queue, ...extra }), field, problem)
  })

  it("refuses a queue's knobs on any other algorithm", () => {
    expectOne(code({ ...bucket, nodelay: true }), 'nodelay', 'not used by token_bucket')
    expectOne(file({ ...fileBucket, delay: 10 }), 'delay', 'not used by token_bucket')
    expectOne(file({ ...fileBucket, max_wait_s: 1 }), 'max_wait_s', 'not used by token_bucket')
  })

  it('reads the file shape: delay, nodelay, max_wait_s or max_wait with its unit', () => {
    const [a, b] = parseRules([
      { ...fileQueue, max_wait_s: 2 },
      { ...fileQueue, id: 'b', max_wait: '250ms', nodelay: false },
    ])
    expect(a).toMatchObject({ maxWait: 2000, delay: 0 })
    expect(b).toMatchObject({ maxWait: 250, delay: 0 })
    expectOne(file({ ...fileQueue, max_wait_s: 1, max_wait: '1s' }), 'max_wait', 'not both')
    expectOne(file({ ...fileQueue, maxWait: '1s' }), 'maxWait', 'max_wait_s')
  })

  it("reads spec 004's nginx lines as rule-file fixtures", () => {
    expect(loadRulesText(NGINX_QUEUE_YAML, 'yaml')).toEqual([
      {
        id: 'api-per-ip',
        match: { route: ['/api/*'], identity: ['ip'] },
        algorithm: 'leaky_queue',
        rate: 10,
        period: 1000,
        burst: 20,
        delay: 20,
        costByRoute: {},
        ...defaults,
      },
      {
        id: 'api-per-key',
        match: { route: ['/api/*'], identity: ['api_key'] },
        algorithm: 'leaky_queue',
        rate: 10,
        period: 1000,
        burst: 50,
        delay: 10,
        costByRoute: {},
        ...defaults,
      },
      {
        id: 'login-per-ip',
        match: { route: ['/login'], identity: ['ip'] },
        algorithm: 'leaky_queue',
        rate: 10,
        period: 1000,
        burst: 5,
        delay: 0,
        costByRoute: {},
        ...defaults,
      },
    ])
  })
})
