// The scripts' exact division (ARITHMETIC_LUA's floorDiv) against exact integer division, on a
// real Redis: Lua numbers are doubles, so a quotient near 2^53 or of a negative numerator is
// where a shortcut would round the wrong way.
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ARITHMETIC_LUA } from '../../packages/redis/src/scripts/assemble.js'
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
