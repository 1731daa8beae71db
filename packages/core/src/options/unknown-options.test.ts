import { describe, expect, it } from 'vitest'
import { checkAdapterOptions } from '../adapter/options.js'
import { isRateLimitError } from '../errors.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleConfig } from '../rules/types.js'
import { FOREIGN_OPTIONS } from './foreign-options.js'

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]

function refusal(start: () => unknown): { field: string | undefined; message: string } {
  try {
    start()
  } catch (error) {
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
    return { field: (error as { field?: string }).field, message: (error as Error).message }
  }
  throw new Error('the options were accepted')
}

describe('createLimiter options', () => {
  it('refuses an unknown option, with the closest known one', () => {
    const { field, message } = refusal(() =>
      createLimiter({ rules: RULES, storeTimeoutMS: 10 } as never),
    )
    expect(field).toBe('storeTimeoutMS')
    expect(message).toContain('createLimiter(): unknown option "storeTimeoutMS"')
    expect(message).toContain('did you mean "storeTimeoutMs"?')
  })

  it('points users of express-rate-limit to the Tollgate equivalent', () => {
    const { message } = refusal(() =>
      createLimiter({ rules: RULES, windowMs: 60_000, max: 5, keyGenerator: () => 'k' } as never),
    )
    expect(message).toContain('3 problems')
    expect(message).toMatch(/"windowMs": .*a rule's window here, with its unit/)
    expect(message).toMatch(/"max": .*a rule's limit here/)
    expect(message).toMatch(/"keyGenerator": .*match\.identity/)
  })

  it('counts an option given as undefined as not given', () => {
    expect(() => createLimiter({ rules: RULES, windowMs: undefined } as never)).not.toThrow()
  })
})

const checkHooks = (options: object, adapterHooks: string[] = []) =>
  checkAdapterOptions(options, adapterHooks, FOREIGN_OPTIONS)

describe('adapter options (checkAdapterOptions, which every adapter kit calls first)', () => {
  it('refuses a misspelt core option, and express-rate-limit names', () => {
    for (const [name, expected] of [
      ['trustproxy', 'did you mean "trustProxy"?'],
      ['standardheaders', 'did you mean "standardHeaders"?'],
      ['windowMs', "a rule's window"],
      ['limit', "a rule's limit"],
      ['skipFailedRequests', "refund: 'failed'"],
      ['headers', 'standardHeaders'],
    ] as const) {
      const { field, message } = refusal(() => checkHooks({ [name]: 1 }))
      expect(field).toBe(name)
      expect(message).toContain(expected)
    }
  })

  it("refuses express-rate-limit's standardHeaders: true, naming the drafts", () => {
    const { message } = refusal(() => checkHooks({ standardHeaders: true }))
    expect(message).toContain("'draft-11'")
  })

  it('takes every option it documents, and the adapter’s own', () => {
    const options = {
      trustProxy: 'loopback',
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      storeTimeoutMs: 500,
      customIdentities: ['account'],
      logger: false,
      refund: 'failed',
      skip: () => false,
    }
    expect(() => checkHooks(options)).not.toThrow()
    const withConnInfo = { ...options, getConnInfo: () => ({}) }
    expect(() => checkHooks(withConnInfo, ['getConnInfo'])).not.toThrow()
    expect(refusal(() => checkHooks(withConnInfo)).message).toContain(
      'rateLimit(): unknown option "getConnInfo"',
    )
  })
})
