/**
 * `REDIS_URL=… pnpm demo`: two gateway processes on one Redis must share every limit. Needs a
 * Redis server: skipped with a warning without one, except in CI, where that fails the run.
 */
import { REDIS_URL, redisForTest } from '@tollgate/test-utils'
import { Redis } from 'ioredis'
import { beforeAll, describe, expect, it } from 'vitest'
import { rowPattern, runDemoCli } from './run-cli.js'

const available = await redisForTest('the Redis demo test')

describe.runIf(available)('pnpm demo on Redis, two gateway processes', () => {
  let stdout = ''

  beforeAll(async () => {
    const run = await runDemoCli({ REDIS_URL })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    stdout = run.stdout
  }, 60_000)

  it('admits exactly 20 of the burst across both gateways, 10 through each', () => {
    expect(stdout).toContain(`Store: Redis at ${REDIS_URL}`)
    expect(stdout).toContain('t = 0 s: 25 sent, 20 allowed (A 10, B 10), 5 denied')
    expect(stdout).toContain('t = 0.5 s: 8 sent, 5 allowed (A 2, B 3), 3 denied')
    expect(stdout).toContain('t = 2.5 s: 1 sent, 1 allowed (B 1), 0 denied')
    expect(stdout).toContain(
      'The burst at t = 0 across both gateways: 20 of 25 admitted (A 10, B 10).',
    )
  })

  it('plays every scenario as on the memory store, whichever gateway answers', () => {
    expect(stdout).toMatch(
      rowPattern([
        '12:00:02.500',
        'B',
        'GET /v1/quotes',
        'key k_free_acme',
        '200',
        '19',
        '-',
        '"free-global";r=19;t=1, "free-daily";r=9974;t=43198',
      ]),
    )
    expect(stdout).toMatch(
      rowPattern([
        '12:00:03.000',
        'A',
        'POST /v1/labels:batch',
        'key k_growth_globex',
        '429',
        '0',
        '1',
        '"labels-bulk";r=0;t=1',
      ]),
    )
    expect(stdout).toContain('12:05:06.000: 10 sent, 0 allowed (A 0, B 0), 10 denied')
    expect(stdout).toMatch(
      /12:05:30\.000\s+B\s+POST \/v1\/login\s+from 203\.0\.113\.95, spoofing .*429\s+0\s+31\s/,
    )
  })

  it('deletes its keys at the end', async () => {
    const prefix = /keys under (\S+): \(deleted at the end\)/.exec(stdout)?.[1]
    expect(prefix).toMatch(/^shiplane-demo:\d+:[0-9a-f]{8}$/)
    const redis = new Redis(REDIS_URL)
    try {
      expect(await redis.keys(`${prefix}:*`)).toEqual([])
    } finally {
      redis.disconnect()
    }
  })
})
