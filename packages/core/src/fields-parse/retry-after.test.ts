import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_WAIT_MS, parseRetryAfter } from './retry-after.js'

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0)

/** RFC 9110: delay-seconds = 1*DIGIT, with the field line's OWS (spaces, tabs) around it. */
const DELAY_SECONDS_FIELD = /^[ \t]*([0-9]+)[ \t]*$/

/** Characters numbers are written with, right or wrong, and whitespace of every kind. */
const numberish = fc
  .array(
    fc.constantFrom(
      ...'0123456789'.split(''),
      '.',
      ',',
      '_',
      '+',
      '-',
      'e',
      'E',
      'x',
      ' ',
      '\t',
      '\n',
      '\r',
      '\u000b',
      '\u00a0',
      '\u2009',
      '\ufeff',
      '\uff11', // a fullwidth digit one
    ),
    { maxLength: 12 },
  )
  .map((chars) => chars.join(''))

function expectedMs(digits: string): number {
  const ms = BigInt(digits) * 1000n
  return ms > BigInt(MAX_WAIT_MS) ? MAX_WAIT_MS : Number(ms)
}

describe('Retry-After delay-seconds', () => {
  it('reads digits alone, with OWS around them, as whole seconds; anything else not at all', () => {
    fc.assert(
      fc.property(numberish, (value) => {
        const digits = DELAY_SECONDS_FIELD.exec(value)?.[1]
        expect(parseRetryAfter(value, NOW)).toBe(
          digits === undefined ? undefined : expectedMs(digits),
        )
      }),
      { numRuns: 5000 },
    )
  })

  it('reads any count of seconds, however many digits, capped at the longest wait', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,30}$/), (digits) => {
        expect(parseRetryAfter(digits, NOW)).toBe(expectedMs(digits))
      }),
    )
  })

  it('refuses a number that is not delay-seconds, whatever it is written around', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{1,4}$/),
        fc.constantFrom('.5', '.', 'e3', 'E3', ' 5', '\t5', ',5', '_5', 's', '\u00a0'),
        fc.constantFrom('', '+', '-', '0x', '\u00a0', '\n'),
        (digits, after, before) => {
          expect(parseRetryAfter(`${before}${digits}${after}`, NOW)).toBeUndefined()
        },
      ),
    )
  })

  it('keeps reading an HTTP-date with OWS around it, and refuses one with other whitespace', () => {
    const date = 'Thu, 15 Jan 2026 12:00:30 GMT'
    expect(parseRetryAfter(` ${date}\t`, NOW)).toBe(30_000)
    expect(parseRetryAfter(`\u00a0${date}`, NOW)).toBeUndefined()
    expect(parseRetryAfter(`${date}\n`, NOW)).toBeUndefined()
  })
})
