import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toMilliseconds } from '../rules/duration.js'
import { edgeMilliseconds } from './edge-duration.js'

const PIECES = [
  '0',
  '1',
  '5',
  '60',
  '.',
  '.5',
  ' ',
  'ms',
  's',
  'sec',
  'secs',
  'second',
  'seconds',
  'm',
  'min',
  'mins',
  'minute',
  'minutes',
  'h',
  'hour',
  'hours',
  'hr',
  'd',
  'day',
  'days',
  'w',
  'MS',
  'Min',
  '-',
  'e3',
  '1e3',
  '0.0001',
  '0.3',
  '9007199254740993',
]

describe('edgeMilliseconds', () => {
  it('takes the durations toMilliseconds takes, as the same whole ms', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 5 }), (pieces) => {
        const text = pieces.join('')
        const expected = toMilliseconds(text)
        const got = edgeMilliseconds(text)
        expect(typeof got, JSON.stringify(text)).toBe(typeof expected)
        if (typeof expected === 'number') expect(got).toBe(expected)
      }),
      { numRuns: 20_000 },
    )
    for (const value of [60, null, undefined, {}, true]) {
      expect(typeof edgeMilliseconds(value)).toBe('string')
    }
  })
})
