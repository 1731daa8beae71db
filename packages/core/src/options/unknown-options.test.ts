import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkAdapterOptions } from '../adapter/options.js'
import { isRateLimitError } from '../errors.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { missingIdentityStatus } from '../response/responder.js'
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
  checkAdapterOptions(options, adapterHooks, {
    foreignOptions: FOREIGN_OPTIONS,
    missingIdentity: missingIdentityStatus,
  })

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

/** Every name `rateLimit()` knows, as its refusal of a name far from all of them lists them. */
function adapterOptionNames(): readonly string[] {
  const { message } = refusal(() => checkHooks({ qqqqqqqqqqqqqqqqqqqqqqqq: 1 }))
  return message.slice(message.indexOf('known options: ') + 15).split(', ')
}

/** Every single-edit typo of `name`: a letter dropped, added, changed, or two swapped. */
function typosOf(name: string, letter: string, at: number): readonly string[] {
  const i = at % (name.length + 1)
  const j = Math.min(i, name.length - 1)
  return [
    name.slice(0, j) + name.slice(j + 1),
    name.slice(0, i) + letter + name.slice(i),
    name.slice(0, j) + letter + name.slice(j + 1),
    j + 1 < name.length ? name.slice(0, j) + name[j + 1] + name[j] + name.slice(j + 2) : name,
  ]
}

describe('a misspelt option, known or foreign', () => {
  it('answers windwoMs with windowMs and where express-rate-limit’s windowMs lives here', () => {
    const { field, message } = refusal(() => checkHooks({ windwoMs: 60_000 }))
    expect(field).toBe('windwoMs')
    expect(message).toContain(
      `unknown option "windwoMs": did you mean "windowMs"? express-rate-limit's windowMs is a rule's window here`,
    )
    expect(message).not.toContain('known options')
  })

  it('gets a suggestion for any single-edit typo of a known or foreign name', () => {
    const known = adapterOptionNames()
    expect(known).toContain('trustProxy')
    const foreign = Object.keys(FOREIGN_OPTIONS.names)
    const names = [...known, ...foreign]
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_'),
        fc.nat(),
        (name, letter, at) => {
          for (const typo of typosOf(name, letter, at)) {
            if (names.includes(typo)) continue // another real name: nothing to refuse
            const { field, message } = refusal(() => checkHooks({ [typo]: 1 }))
            expect(field).toBe(typo)
            expect(message, typo).toContain('did you mean "')
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
