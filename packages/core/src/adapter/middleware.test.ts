import { describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Verdict } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'
import { createTollgate, type Handled, requestReaders, userIdOf } from './middleware.js'

const PER_IP: RuleConfig = {
  id: 'per-ip',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 10,
  window: '1s',
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

describe('requestReaders', () => {
  const PER_USER: RuleConfig = { ...PER_IP, id: 'per-user', match: { identity: ['user', 'ip'] } }
  const readers = (rules: readonly RuleConfig[] | ReturnType<typeof createLimiter>) => {
    const asked: string[] = []
    const user = (req: string) => {
      asked.push(req)
      return `user of ${req}`
    }
    const hooks = { user }
    const read = requestReaders(hooks, () => 'default', createTollgate(rules, { logger: false }))
    return { user: read.user('req-1'), asked }
  }

  it('never looks the user up when no rule keys on it', () => {
    expect(readers([PER_IP, PER_KEY])).toEqual({ user: undefined, asked: [] })
  })

  it('reads the user for a rule keyed on it (alone or in a composite), or a limiter of the app', () => {
    const read = { user: 'user of req-1', asked: ['req-1'] }
    expect(readers([PER_IP, PER_USER])).toEqual(read)
    expect(readers(createLimiter({ rules: [PER_IP], logger: false }))).toEqual(read)
  })

  it("falls back to the framework's default reader", () => {
    const gate = createTollgate([PER_USER], { logger: false })
    expect(requestReaders({}, () => 'default', gate).user('req-1')).toBe('default')
  })
})

describe('userIdOf', () => {
  it('takes an id, or the id of a user object', () => {
    expect(userIdOf('u_1')).toBe('u_1')
    expect(userIdOf(42)).toBe(42)
    expect(userIdOf({ id: 'u_2', name: 'Ada' })).toBe('u_2')
    expect(userIdOf({ id: 7 })).toBe(7)
  })

  it('finds no user in anything else, so that the rule falls back as configured', () => {
    for (const value of [undefined, null, true, {}, { id: null }, { id: { nested: 1 } }, ['u_1']])
      expect(userIdOf(value)).toBeUndefined()
  })
})

describe('createTollgate with partition keys', () => {
  it('admits a new client synchronously with a memory store, pk written with its fields', () => {
    const clock = { now: () => 1_700_000_000_250 }
    const gate = createTollgate([PER_IP], { logger: false, partitionKey: true, clock })
    const fieldsOf = (ip: string) => {
      const verdict = gate.handleAdmitted({ method: 'GET', path: '/', identities: { ip } })
      expect(verdict).not.toBeInstanceOf(Promise)
      const fields: Record<string, string> = {}
      gate.writeFields(verdict as Verdict, { write: (name, value) => (fields[name] = value) })
      return fields
    }
    const first = fieldsOf('203.0.113.7')
    expect(first['RateLimit']).toMatch(/^"per-ip";r=9;t=1;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(fieldsOf('203.0.113.7')['RateLimit']).toBe(first['RateLimit']!.replace('r=9', 'r=8'))
    const other = fieldsOf('203.0.113.8')['RateLimit']!
    expect(other.replace(/pk=.*/, '')).toBe(first['RateLimit']!.replace(/pk=.*/, ''))
    expect(other).not.toBe(first['RateLimit'])
    // `handle` builds the same fields, one request later.
    const handled = gate.handle({ method: 'GET', path: '/', identities: { ip: '203.0.113.7' } })
    const built = Object.fromEntries((handled as Handled).response.headers)
    expect(built['RateLimit']).toBe(first['RateLimit']!.replace('r=9', 'r=7'))
  })
})
