// The `user` identity read in one step: the adapters hand `compileIdentities` what the
// framework's auth middleware left (`req.user`, `ctx.state.user`, `c.get('user')`), which it
// reads as `userIdOf` did before handing it over (both copied below, as they were), and a `user`
// hook's id the same way.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ClientIp, compileClientIp, type HeaderReader } from './client-ip.js'
import { compileIdentities, type UserId } from './identities.js'
import { trustedProxies } from './proxy-trust.js'

function oldUserIdOf(user: unknown): UserId {
  const id = typeof user === 'object' && user !== null ? (user as { id?: unknown }).id : user
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

function oldUserIdentity(user: UserId): string | undefined {
  return user === undefined || user === null || user === '' ? undefined : String(user)
}

type Source = Readonly<Record<string, string | undefined>>
const read: HeaderReader<Source> = (s, name) => s[name]
const clientIp: ClientIp = compileClientIp({ logger: false }, trustedProxies)
const identities = compileIdentities<Source>(read, clientIp, undefined)
const userOf = (given: unknown) => identities({}, '203.0.113.7', given).user

/** A user id of every kind, and values that are none. */
const id = fc.oneof(
  fc.string(),
  fc.constantFrom('', '0', 'u_1', ' '),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, null, undefined),
)

/** What auth middleware may leave: an id, an object with one (or with anything), anything. */
const stored = fc.oneof(
  id,
  id.map((value) => ({ id: value, name: 'Ada' })),
  fc.anything().map((value) => ({ id: value })),
  fc.anything(),
  fc.constantFrom(true, false, 12n, [], [1], () => 'u_1', { id: { id: 'u_1' } }),
)

describe('the user identity', () => {
  it('reads what the framework stores as userIdOf then the identity did', () => {
    fc.assert(
      fc.property(stored, (value) => {
        expect(userOf(value)).toBe(oldUserIdentity(oldUserIdOf(value)))
      }),
      { numRuns: 5000 },
    )
  })

  it("reads a user hook's id as before", () => {
    fc.assert(
      fc.property(id as fc.Arbitrary<UserId>, (value) => {
        expect(userOf(value)).toBe(oldUserIdentity(value))
      }),
      { numRuns: 5000 },
    )
  })

  it("reads a hook's value of another type as the framework's: an object's id, else none", () => {
    // Before, any such value was used as its text: every object was one user, "[object Object]".
    expect(userOf({ id: 'u_1' })).toBe('u_1')
    expect(userOf({ name: 'Ada' })).toBeUndefined()
    expect(userOf(true)).toBeUndefined()
    expect(userOf(12n)).toBeUndefined()
  })
})
