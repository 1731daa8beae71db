// The scripts' exact division (ARITHMETIC_LUA's floorDiv) against exact integer division, and
// their reading of the server's TIME, on a real Redis: Lua numbers are doubles, so a quotient
// near 2^53 or of a negative numerator is where a shortcut would round the wrong way.
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ARITHMETIC_LUA, arithmeticFor } from '../../packages/redis/src/scripts/assemble.js'
import { SCALED_UP_LUA } from '../../packages/redis/src/scripts/carry.lua.js'
import { serverNowLua } from '../../packages/redis/src/scripts/server-time.lua.js'
import { REDIS_URL, redisAvailable } from './support/redis-env.js'

/** Divides each pair of ARGV (numerator, denominator) and replies the quotients as text. */
const DIVIDE = `${ARITHMETIC_LUA}
local out = {}
for i = 1, #ARGV, 2 do out[#out + 1] = format('%d', floorDiv(tonumber(ARGV[i]), tonumber(ARGV[i + 1]))) end
return out`

/** floor(a / b), computed on big integers. */
function exactFloorDiv(a: number, b: number): number {
  const [x, y] = [BigInt(a), BigInt(b)]
  const q = x / y
  return Number(x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q)
}

// Numerators and divisors as the algorithms make them: |a| + 2b stays below 2^53.
const MAX = Number.MAX_SAFE_INTEGER - 2 ** 33
const numerator = fc.oneof(
  fc.integer({ min: -MAX, max: MAX }),
  fc.integer({ min: MAX - 10_000, max: MAX }),
  fc.integer({ min: -MAX, max: -MAX + 10_000 }),
  fc.integer({ min: -1000, max: 1000 }),
)
const denominator = fc.oneof(
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 1, max: 2 ** 32 }),
)

describe.skipIf(!redisAvailable)('the scripts’ floorDiv', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(REDIS_URL)
  })
  afterAll(() => redis?.disconnect())

  it('is exact for whole numbers below 2^53', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(numerator, denominator), { minLength: 1, maxLength: 50 }),
        async (pairs) => {
          const args = pairs.flatMap(([a, b]) => [String(a), String(b)])
          const reply = (await redis.eval(DIVIDE, 0, ...args)) as string[]
          expect(reply.map(Number)).toEqual(pairs.map(([a, b]) => exactFloorDiv(a, b)))
        },
      ),
      { numRuns: 100 },
    )
  })
})

/**
 * serverNowLua over TIME replies given as ARGV pairs (seconds, microseconds, as TIME sends them:
 * decimal text without leading zeros), each ms time replied as text with three decimals: a
 * fraction left over would show (`%d` would drop it).
 */
const READ_TIMES = `local format = string.format
local out = {}
for i = 1, #ARGV, 2 do
  ${serverNowLua('local now').replace("redis.call('TIME')", '{ ARGV[i], ARGV[i + 1] }')}
  out[#out + 1] = format('%.3f', now)
end
return out`

describe.skipIf(!redisAvailable)('the scripts’ server time', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(REDIS_URL)
  })
  afterAll(() => redis?.disconnect())

  it('is TIME in whole ms, rounded down', async () => {
    const seconds = fc.oneof(
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.integer({ min: 1_700_000_000, max: 2_100_000_000 }),
    )
    const micros = fc.oneof(
      fc.integer({ min: 0, max: 999_999 }),
      fc.constantFrom(0, 999, 1000, 999_999),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(seconds, micros), { minLength: 1, maxLength: 50 }),
        async (times) => {
          const args = times.flatMap(([s, us]) => [String(s), String(us)])
          const reply = (await redis.eval(READ_TIMES, 0, ...args)) as string[]
          expect(reply).toEqual(times.map(([s, us]) => `${s * 1000 + Math.floor(us / 1000)}.000`))
        },
      ),
      { numRuns: 100 },
    )
  })

  it('agrees with the server’s TIME', async () => {
    const lua = `${serverNowLua('local now')}\nreturn { t[1], t[2], string.format('%d', now) }`
    const [s, us, now] = (await redis.eval(lua, 0)) as string[]
    expect(Number(now)).toBe(Number(s) * 1000 + Math.floor(Number(us) / 1000))
  })
})

describe.skipIf(!redisAvailable)('the rule-set scripts’ helpers', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(REDIS_URL)
  })
  afterAll(() => redis?.disconnect())

  it('binds what a body calls, and only that', async () => {
    const bodies = [
      "return { format('%d', floorDiv(7, 2)), max(1, 2), min(1, 2), floor(2.5) }",
      'return { floorDiv(-7, 2) }',
      'return { max(3, 4) }',
      'return 1',
    ]
    const replies = []
    for (const body of bodies) replies.push(await redis.eval(arithmeticFor(body) + body, 0))
    expect(replies).toEqual([['3', 2, 1, 2], [-4], [4], 1])
    expect(arithmeticFor('return 1').trim()).toBe('')
    expect(arithmeticFor('return { max(3, 4) }')).not.toMatch(/floorDiv|min|format|floor/)
  })
})

/** Replies ceil(a × b / c) of each triple of ARGV, as text. */
const SCALE = `${ARITHMETIC_LUA}${SCALED_UP_LUA}
local out = {}
for i = 1, #ARGV, 3 do out[#out + 1] = format('%d', scaledUp(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]))) end
return out`

describe.skipIf(!redisAvailable)('the scripts’ scaledUp (a carried amount, carry.lua.ts)', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(REDIS_URL)
  })
  afterAll(() => redis?.disconnect())

  // Amounts used (up to two capacities) times a new rule's units, over an old rule's: products
  // far past 2^53, quotients below it (a larger one is capped by the caller).
  const below = (bits: number) =>
    fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 2 ** bits }))
  const triple = fc
    .tuple(fc.integer({ min: 0, max: 2 ** 53 - 1 }), below(52), below(52))
    .filter(([a, b, c]) => (BigInt(a) * BigInt(b) + BigInt(c) - 1n) / BigInt(c) < 2n ** 53n)

  it('is exact where the product passes 2^53 and the quotient does not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(triple, { minLength: 1, maxLength: 50 }), async (triples) => {
        const args = triples.flatMap((values) => values.map(String))
        const reply = (await redis.eval(SCALE, 0, ...args)) as string[]
        expect(reply.map(BigInt)).toEqual(
          triples.map(([a, b, c]) => (BigInt(a) * BigInt(b) + BigInt(c) - 1n) / BigInt(c)),
        )
      }),
      { numRuns: 200 },
    )
  })
})
