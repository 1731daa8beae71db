import { describe, expect, it } from 'vitest'
import type { Verdict } from '../limiter/types.js'
import { nodeSha256 } from '../node/sha256.js'
import { createResponder, type ResponderOptions } from '../response/responder.js'
import { decision, verdict } from '../response/test-fixtures.js'

/** Every field `writeFields` writes, in order, as entries. */
function written(
  options: ResponderOptions,
  v: Verdict,
  now: number,
  responder = createResponder(options),
): Array<[string, string]> {
  const fields: Array<[string, string]> = []
  responder.writeFields(v, now, {
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

describe('writeFields with partition keys', () => {
  const keyed = (options: ResponderOptions) => ({ ...options, partitionKey: true })

  it('writes what respondWithKeys answers when the runtime hashes synchronously', () => {
    // Only the current RateLimit fields carry a `pk` (the others refuse a partition key).
    const carrying = OPTIONS.filter((o) => o.standardHeaders === undefined)
    expect(carrying.length).toBeGreaterThan(3)
    for (const options of carrying) {
      const responder = createResponder(keyed(options), { sha256: nodeSha256 })
      expect(responder.writesPartitionKeys).toBe(true)
      for (const v of VERDICTS) {
        for (const now of [0, 1_700_000_000_123]) {
          const built = responder.respondWithKeys(v, now)
          if (built instanceof Promise) throw new Error('a synchronous hash answers at once')
          expect(written(options, v, now, responder)).toEqual(built.headers)
        }
      }
    }
  })

  it('leaves them to respondWithKeys when the hash is asynchronous (Web Crypto)', () => {
    const responder = createResponder(keyed({}))
    expect(responder.usesPartitionKeys).toBe(true)
    expect(responder.writesPartitionKeys).toBe(false)
    expect(written({}, VERDICTS[0]!, 0, responder).join()).not.toContain('pk=')
    expect(createResponder({}).writesPartitionKeys).toBe(true)
  })
})
