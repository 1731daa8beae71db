import { describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleConfig } from '../rules/types.js'
import { createTollgate } from './middleware.js'

const PER_IP: RuleConfig = {
  id: 'per-ip',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 10,
  window: 1000,
}
const PER_KEY: RuleConfig = { ...PER_IP, id: 'per-key', match: { identity: 'api_key' } }
const source = {
  socketAddress: '203.0.113.7',
  header: (name: string) => ({ 'x-api-key': 'k_1' })[name],
  user: 'u_1',
}

describe('createTollgate requestIdentities', () => {
  it('reads no API key when no rule keys on one', () => {
    const gate = createTollgate([PER_IP], { logger: false })
    expect(gate.requestIdentities(source)).toEqual({
      ip: '203.0.113.7',
      api_key: undefined,
      user: 'u_1',
    })
    expect(gate.identities.identities(source).api_key).toBe('k_1')
  })

  it('reads every identity for rules that key on the API key, or a limiter of the app', () => {
    const all = { ip: '203.0.113.7', api_key: 'k_1', user: 'u_1' }
    expect(createTollgate([PER_IP, PER_KEY], { logger: false }).requestIdentities(source)).toEqual(
      all,
    )
    const limiter = createLimiter({ rules: [PER_IP], logger: false })
    expect(createTollgate(limiter, { logger: false }).requestIdentities(source)).toEqual(all)
  })
})
