import { describe, expect, it } from 'vitest'
import { defineRules } from './define-rules.js'
import { parseRules } from './parse-rules.js'
import { bucket, code, expectOne, file, fileBucket } from './test-fixtures.js'

const penalised = (penalty: unknown, extra: object = {}) => ({ ...bucket, penalty, ...extra })

describe('a rule’s penalty', () => {
  it('is read in whole ms with its defaults: factor 2, a day to the cap and to forget', () => {
    const [rule] = defineRules([penalised({ block: '1m' }) as never])
    expect(rule?.penalty).toEqual({
      block: 60_000,
      factor: 2,
      maxBlock: 86_400_000,
      forgetAfter: 86_400_000,
    })
    const [given] = defineRules([
      penalised({ block: '2d', factor: 3, forgetAfter: '1h', forbidAfter: 4 }) as never,
    ])
    // The cap is never below the block itself.
    expect(given?.penalty).toEqual({
      block: 172_800_000,
      factor: 3,
      maxBlock: 172_800_000,
      forgetAfter: 3_600_000,
      forbidAfter: 4,
    })
  })

  it('is spelt in snake_case in a rules file', () => {
    const [rule] = parseRules([
      {
        ...fileBucket,
        penalty: { block: '30s', max_block: '10m', forget_after: '1d', forbid_after: 2 },
      },
    ])
    expect(rule?.penalty).toMatchObject({ block: 30_000, maxBlock: 600_000, forbidAfter: 2 })
    expectOne(
      file({ ...fileBucket, penalty: { block: '30s', maxBlock: '10m' } }),
      'penalty.maxBlock',
      'did you mean "max_block"?',
    )
  })

  it('refuses a misspelt field with the nearest name, and one it does not know', () => {
    expectOne(
      code(penalised({ block: '1m', maxblock: '1h' })),
      'penalty.maxblock',
      'did you mean "maxBlock"?',
    )
    expectOne(
      code(penalised({ block: '1m', forgetafter: '1h' })),
      'penalty.forgetafter',
      'did you mean "forgetAfter"?',
    )
    expectOne(
      code(penalised({ block: '1m', colour: 'red' })),
      'penalty.colour',
      'unknown field; known fields: block',
    )
  })

  it('refuses what is not a penalty, and a penalty without its block', () => {
    expectOne(code(penalised(true)), 'penalty', "expected an object such as { block: '1m'")
    expectOne(code(penalised({ factor: 2 })), 'penalty.block', "required: a duration such as '1m'")
  })

  it('refuses durations without a unit, of zero, or beyond a year', () => {
    expectOne(code(penalised({ block: 60 })), 'penalty.block', 'a bare number has no unit')
    expectOne(code(penalised({ block: '0s' })), 'penalty.block', 'expected a duration > 0')
    expectOne(
      code(penalised({ block: '1m', maxBlock: '400d' })),
      'penalty.maxBlock',
      'at most a year',
    )
    expectOne(
      code(penalised({ block: '1m', forgetAfter: 'soon' })),
      'penalty.forgetAfter',
      'expected a duration',
    )
  })

  it('refuses a factor or forbidAfter that is not a whole number ≥ 1, and a cap below the block', () => {
    expectOne(
      code(penalised({ block: '1m', factor: 1.5 })),
      'penalty.factor',
      'from 1 to 1000, got 1.5',
    )
    expectOne(
      code(penalised({ block: '1m', factor: 0 })),
      'penalty.factor',
      'from 1 to 1000, got 0',
    )
    expectOne(code(penalised({ block: '1m', forbidAfter: 0 })), 'penalty.forbidAfter', 'got 0')
    expectOne(
      code(penalised({ block: '1h', maxBlock: '1m' })),
      'penalty.maxBlock',
      'shorter than block (60000 ms < 3600000 ms)',
    )
  })

  it('is refused on a shadow rule, which never denies, and on a concurrency rule', () => {
    expectOne(
      code(penalised({ block: '1m' }, { mode: 'shadow' })),
      'penalty',
      'a shadow rule never denies',
    )
    const slots = {
      id: 'r',
      match: {},
      algorithm: 'concurrency',
      limit: 2,
      penalty: { block: '1m' },
    }
    expectOne(code(slots), 'penalty', 'a concurrency refusal ends when a slot frees')
  })
})
