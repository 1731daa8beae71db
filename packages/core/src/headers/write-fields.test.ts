import { describe, expect, it } from 'vitest'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from '../response/responder.js'
import { decision, verdict } from '../response/test-fixtures.js'

/** Every field `writeFields` writes, in order, as entries. */
function written(options: ResponderOptions, v: Verdict, now: number): Array<[string, string]> {
  const fields: Array<[string, string]> = []
  createResponder(options).writeFields(v, now, {
    write: (name, value) => fields.push([name, value]),
  })
  return fields
}

const OPTIONS: ResponderOptions[] = [
  {},
  { exposeHeaders: true },
  { legacyReset: 'delta-seconds' },
  { legacyHeaders: false },
  { standardHeaders: false },
  { standardHeaders: 'draft-6' },
  { standardHeaders: 'draft-7', exposeHeaders: true },
  { shadowPolicies: true },
  { legacyHeaders: false, standardHeaders: false, exposeHeaders: true },
]

const shadow = decision('shadow', { mode: 'shadow', remaining: 3 })
const VERDICTS: Verdict[] = [
  verdict([decision('api', { remaining: 42, resetAfterMs: 12_500 })]),
  verdict([decision('api', { remaining: 0, resetAfterMs: 0 })]),
  verdict([decision('api', { policy: { quota: 10, windowMs: 1000 }, limit: 20 })]),
  verdict([decision('a', { remaining: 7 }), decision('b', { remaining: 3 })]),
  verdict([decision('api'), shadow]),
  verdict([shadow]),
  verdict([]),
  verdict([], 'limit', { storeFailed: true }),
]

describe('writeFields', () => {
  it('writes the entries of an admitted response, in order, for every field option', () => {
    for (const options of OPTIONS) {
      for (const v of VERDICTS) {
        for (const now of [0, 1_700_000_000_123]) {
          const { headers } = createResponder(options).respond(v, now)
          expect(written(options, v, now)).toEqual(headers)
        }
      }
    }
  })
})
