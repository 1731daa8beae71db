import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import { RuleValidationError } from '../rules/issues.js'
import type { RateRuleConfig, RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import type { LimiterOptions } from './types.js'

const keyedOn = (identity: RateRuleConfig['match']['identity']): RuleConfig => ({
  id: 'per-key',
  match: { identity },
  algorithm: 'token_bucket',
  rate: 10,
  burst: 20,
})

function refusal(options: LimiterOptions): { code?: string; field?: string; message: string } {
  try {
    createLimiter(options)
  } catch (error) {
    expect(isRateLimitError(error)).toBe(true)
    const issue = error instanceof RuleValidationError ? error.issues[0] : undefined
    return {
      code: (error as { code?: string }).code,
      field: issue?.field ?? (error as { field?: string }).field,
      message: String(error),
    }
  }
  throw new Error('the options were accepted')
}

describe('identities nothing provides', () => {
  it('refuses them at start-up, with the built-in name meant', () => {
    for (const [name, meant] of [
      ['apikey', 'api_key'],
      ['api-key', 'api_key'],
      ['apiKey', 'api_key'],
      ['user_id', 'user'],
    ]) {
      const { code, field, message } = refusal({ rules: [keyedOn(name!)] })
      expect(code).toBe('ERR_RL_INVALID_RULE')
      expect(field).toBe('match.identity')
      expect(message).toContain(`no identity "${name}": did you mean "${meant}"?`)
    }
    const { message } = refusal({ rules: [keyedOn(['tenant', 'ip'])] })
    expect(message).toContain(
      `no identity "tenant": known: ip, api_key, user; or add it to customIdentities`,
    )
    // A name far from any known one is answered with the known names alone.
    for (const name of ['key', 'ip_address']) {
      expect(refusal({ rules: [keyedOn(name)] }).message).toContain(
        `no identity "${name}": known: ip, api_key, user; or add it to customIdentities`,
      )
    }
  })

  it('accepts the identities the app declares, and suggests them when misspelt', () => {
    const limiter = createLimiter({
      rules: [keyedOn(['account', 'ip'])],
      customIdentities: ['account'],
    })
    const facts = { method: 'GET', path: '/', identities: { account: 'a1', ip: '192.0.2.1' } }
    expect(limiter.decide(facts, { now: 0 })).toMatchObject({
      decisions: [{ key: 'account#2:a1&ip#9:192.0.2.1' }],
    })
    const misspelt = refusal({ rules: [keyedOn('acount')], customIdentities: ['account'] })
    expect(misspelt.message).toContain('did you mean "account"?')
  })

  it('refuses a declaration that is not a list of new identity names', () => {
    const rules = [keyedOn('ip')]
    for (const customIdentities of ['account', [''], ['constructor'], ['ip'], [1]]) {
      expect(refusal({ rules, customIdentities } as never)).toMatchObject({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'customIdentities',
      })
    }
  })
})
