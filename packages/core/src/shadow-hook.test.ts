import { describe, expect, it } from 'vitest'
import { decision, verdict } from './response/test-fixtures.js'
import { shadowDeniedHook } from './shadow-hook.js'

const denied = verdict([decision('new-rule', { allowed: false, mode: 'shadow' })])

describe('shadowDeniedHook', () => {
  it('is undefined without a hook, and passes the verdict and request to one', () => {
    expect(shadowDeniedHook({})).toBeUndefined()
    const seen: unknown[] = []
    shadowDeniedHook<string>({ onShadowDenied: (v, req) => seen.push(v, req) })!(denied, 'req')
    expect(seen).toEqual([denied, 'req'])
  })

  it('hears only a verdict a shadow rule would have denied', () => {
    const seen: unknown[] = []
    const hook = shadowDeniedHook<string>({ onShadowDenied: (v) => seen.push(v) })!
    hook(verdict([decision('new-rule', { allowed: false })]), 'req')
    hook(verdict([decision('new-rule', { mode: 'shadow' })]), 'req')
    expect(seen).toEqual([])
    hook(denied, 'req')
    expect(seen).toEqual([denied])
  })

  it('logs a hook that throws once, and returns normally every time', () => {
    const lines: string[] = []
    const hook = shadowDeniedHook({
      onShadowDenied: () => {
        throw new Error('metrics down')
      },
      logger: { warn: (line) => lines.push(line) },
    })!
    expect(() => hook(denied, undefined)).not.toThrow()
    expect(() => hook(denied, undefined)).not.toThrow()
    expect(lines).toEqual([
      '[tollgate] WARN_ON_SHADOW_DENIED_THREW: onShadowDenied threw or rejected: metrics down; the request went on',
    ])
  })

  it('catches a rejection, so that no unhandled rejection ends the process', async () => {
    const lines: string[] = []
    // The warning is what settles the hook's rejection: awaited, not a guessed turn later.
    let logged!: () => void
    const warned = new Promise<void>((resolve) => {
      logged = resolve
    })
    const hook = shadowDeniedHook({
      onShadowDenied: async () => {
        throw new Error('queue full')
      },
      logger: {
        warn: (line) => {
          lines.push(line)
          logged()
        },
      },
    })!
    hook(denied, undefined)
    await warned
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('queue full')
  })

  it('returns normally even when the logger throws too, and honours logger: false', () => {
    const failing = () => {
      throw new Error('hook broke')
    }
    const broken = shadowDeniedHook({
      onShadowDenied: failing,
      logger: {
        warn: () => {
          throw new Error('logger broke')
        },
      },
    })!
    expect(() => broken(denied, undefined)).not.toThrow()
    expect(() =>
      shadowDeniedHook({ onShadowDenied: failing, logger: false })!(denied, undefined),
    ).not.toThrow()
  })
})
