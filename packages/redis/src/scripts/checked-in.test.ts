// The scripts Redis runs, as reviewable files: packages/redis/lua/*.lua are exactly what the
// generator produces, and their SHA1s (the names Redis caches them under) are pinned. After a
// deliberate change to the Lua, regenerate with `pnpm vitest run packages/redis -u` and update
// the pinned SHAs below.
import { fixedWindow, tokenBucket } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import { chargePreparer } from '../prepare.js'
import { redisScripts } from './index.js'

// Changing a script changes these on purpose: operators may pre-load or allow-list them.
const PINNED_CONSUME_SHA = 'e3bb95da05a2b16f482b5f2565124b719626433d'
const PINNED_REFUND_SHA = '2420e7ecb7449abb0b10df7a408bba7b60d0865f'
const PINNED_SETTLE_SHA = '321030ef770306bf54868d3fdd212f1edbdb4152'
const PINNED_PENALTIES_SHA = '9661625f98747765157f6ad80544606eee389570'
const PINNED_RENEW_SHA = '1873650f34099da0da0e93b6f7b971319d42afe4'
const PINNED_EXAMPLE_RULE_SET_SHA = 'dcab64f7790a3c601fa87617a4180d0e1ed5df80'
const PINNED_EXAMPLE_ONE_REQUEST_SHA = '6d79f5d83538bf15f3da288c91d9e6eb3ee4de1e'
const PINNED_EXAMPLE_IDENTITY_SHA = 'cd723fdfa5e005db528286835c5804736768bd1c'

/**
 * A gateway's usual pair: 10 per second with bursts of 20, and 1,000 a day, decided on the
 * server's clock (whose default expiry margin is 0).
 */
function exampleRuleSetScript(layout: 'rule' | 'identity' = 'rule') {
  const preparer = chargePreparer(
    'tollgate',
    { serverTime: true, marginMs: 0 },
    { leaseMs: 10_000, owner: 1 },
    layout,
  )
  const charge = (rule: string, algorithm: ReturnType<typeof tokenBucket>) => ({
    rule,
    algorithm,
    key: 'ip:192.0.2.1',
    cost: 1,
    shadow: false,
  })
  const charges = [
    charge('per-second', tokenBucket({ rate: 10, burst: 20 })),
    charge('per-day', fixedWindow({ limit: 1000, windowMs: 86_400_000 })),
  ]
  for (const c of charges) preparer.keyOf(c)
  return preparer.ruleSetScript(charges)!
}

describe('the checked-in Lua', () => {
  it('consume.lua is the consume script', async () => {
    await expect(redisScripts.consume.source).toMatchFileSnapshot('../../lua/consume.lua')
    expect(redisScripts.consume.sha).toBe(PINNED_CONSUME_SHA)
  })

  it('refund.lua is the refund script', async () => {
    await expect(redisScripts.refund.source).toMatchFileSnapshot('../../lua/refund.lua')
    expect(redisScripts.refund.sha).toBe(PINNED_REFUND_SHA)
  })

  it('settle.lua is the settle script', async () => {
    await expect(redisScripts.settle.source).toMatchFileSnapshot('../../lua/settle.lua')
    expect(redisScripts.settle.sha).toBe(PINNED_SETTLE_SHA)
  })

  it('penalties.lua is the script of penalties and the operator’s calls', async () => {
    await expect(redisScripts.penalties.source).toMatchFileSnapshot('../../lua/penalties.lua')
    expect(redisScripts.penalties.sha).toBe(PINNED_PENALTIES_SHA)
  })

  it('renew.lua is the script that renews concurrency leases', async () => {
    await expect(redisScripts.renew.source).toMatchFileSnapshot('../../lua/renew.lua')
    expect(redisScripts.renew.sha).toBe(PINNED_RENEW_SHA)
  })

  it('rule-set.example.lua is the batch script of a per-second and a per-day rule', async () => {
    const script = exampleRuleSetScript().many
    await expect(script.source).toMatchFileSnapshot('../../lua/rule-set.example.lua')
    expect(script.sha).toBe(PINNED_EXAMPLE_RULE_SET_SHA)
  })

  it('rule-set-identity.example.lua is the one-request script of the same rules, one key per identity', async () => {
    const script = exampleRuleSetScript('identity').one
    await expect(script.source).toMatchFileSnapshot('../../lua/rule-set-identity.example.lua')
    expect(script.sha).toBe(PINNED_EXAMPLE_IDENTITY_SHA)
  })

  it('rule-set-one.example.lua is the one-request script of the same rules', async () => {
    const script = exampleRuleSetScript().one
    await expect(script.source).toMatchFileSnapshot('../../lua/rule-set-one.example.lua')
    expect(script.sha).toBe(PINNED_EXAMPLE_ONE_REQUEST_SHA)
  })
})
