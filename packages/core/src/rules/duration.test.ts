import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toMilliseconds } from './duration.js'

/** Every spelling of every unit, with its length in ms. */
const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
}

describe('durations', () => {
  it('read every spelling of every unit, with or without a space, in any case', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(UNITS)),
        fc.integer({ min: 1, max: 10_000 }),
        fc.constantFrom('', ' '),
        fc.boolean(),
        (unit, amount, space, upper) => {
          const text = `${amount}${space}${upper ? unit.toUpperCase() : unit}`
          expect(toMilliseconds(text)).toBe(amount * UNITS[unit]!)
        },
      ),
    )
  })

  it('refuse any other unit', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,9}$/), (unit) => {
        fc.pre(!Object.hasOwn(UNITS, unit))
        expect(toMilliseconds(`5${unit}`)).toBe(
          `expected a duration such as '500ms', '60s' or '1h', got "5${unit}"`,
        )
      }),
    )
  })
})
