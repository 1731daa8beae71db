import type { RuleConfig } from '@tollgate/core'
import { watchRulesFile } from '@tollgate/core/node'
import { observedLimiter } from '@tollgate/core/observe'
import { loadRulesText } from '@tollgate/core/rules-file'
import { manualClock } from '@tollgate/test-utils'
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from './index.js'

const perIp = (burst: number, onChange?: RuleConfig['onChange']): RuleConfig[] => [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1h',
    burst,
    ...(onChange && { onChange }),
  },
]

function serve(burst: number) {
  const limit = rateLimit(perIp(burst), {
    clock: manualClock(Date.UTC(2026, 0, 1)),
    legacyHeaders: true,
    logger: false,
  })
  const app = express()
  app.use(limit)
  app.get('/', (_req, res) => {
    res.end('ok')
  })
  const remaining = async () => {
    const res = await request(app).get('/')
    return [res.status, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]
  }
  return { limit, remaining }
}

describe('@tollgate/express: middleware.update', () => {
  it('changes a limit while serving: the client keeps what it used (onChange keep)', async () => {
    const { limit, remaining } = serve(5)
    for (let i = 0; i < 4; i++) await remaining()
    expect(await remaining()).toEqual([200, '5', '0'])
    expect(await remaining()).toEqual([429, '5', '0'])
    // An upgrade: five used of the new ten.
    expect(limit.update(perIp(10))).toMatchObject({ changed: ['per-ip'] })
    expect(await remaining()).toEqual([200, '10', '4'])
  })

  it('carries the fraction used with onChange proportional', async () => {
    const { limit, remaining } = serve(4)
    await remaining()
    await remaining()
    limit.update(perIp(10, 'proportional'))
    // Half of four used: five of ten, then one more.
    expect(await remaining()).toEqual([200, '10', '4'])
  })

  it('refuses a bad rule set whole and keeps serving under the running rules', async () => {
    const { limit, remaining } = serve(3)
    await remaining()
    expect(() => limit.update([{ ...perIp(3)[0]!, burst: -1 } as RuleConfig])).toThrow(
      /per-ip.*burst/,
    )
    expect(() =>
      limit.update([{ ...perIp(3)[0]!, id: 'by-key', match: { identity: 'api_key' } }]),
    ).toThrow(/by-key.*match\.identity.*api_key/)
    expect(await remaining()).toEqual([200, '3', '1'])
  })
})

describe('@tollgate/express: middleware.update of an observed limiter', () => {
  it('updates through it, its observers told, and a rules file watched on it is loaded', async () => {
    const events: string[] = []
    const limiter = observedLimiter({
      rules: perIp(5),
      clock: manualClock(Date.UTC(2026, 0, 1)),
      logger: false,
      observers: [
        {
          events: ['rules.update'],
          observe: (event) => {
            if (event.type === 'rules.update') events.push(`${event.outcome} ${event.reason ?? ''}`)
          },
        },
      ],
    })
    const limit = rateLimit(limiter, { legacyHeaders: true, logger: false })
    expect(limit.update(perIp(10))).toMatchObject({ changed: ['per-ip'] })
    // Valid rules, but a concurrency rule the observed limiter was not made with: refused by
    // update, and told to its observers.
    const text = 'rules:\n  - { id: slots, match: {}, algorithm: concurrency, limit: 2 }\n'
    const watcher = watchRulesFile(limit, 'rules.yaml', {
      load: loadRulesText,
      logger: false,
      files: { readFile: async () => text, watch: () => ({ close() {} }) },
    })
    expect(await watcher.reload()).toMatchObject({ outcome: 'refused' })
    expect(events).toEqual(['applied ', 'refused ERR_RL_INVALID_RULE'])
    expect(limit.update).toBeTypeOf('function')
    expect(limiter.updatesRefused).toBe(1)
    watcher.close()
  })
})
