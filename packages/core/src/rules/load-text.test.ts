import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import { defineRules } from './define-rules.js'
import { loadRulesText } from './load-text.js'
import { parseRules } from './parse-rules.js'
import { SPEC_YAML } from './spec-rules.fixture.js'
import type { RuleConfig } from './types.js'

const defaults = { mode: 'enforce', cost: 1, onStoreError: 'open', onMissingIdentity: 'ip' }

describe('loadRulesText', () => {
  it("reads the spec's rule YAML into the model", () => {
    expect(loadRulesText(SPEC_YAML, 'yaml')).toEqual([
      {
        id: 'free-global',
        match: { plan: ['free'], identity: ['api_key'] },
        algorithm: 'token_bucket',
        rate: 10,
        period: 1000,
        burst: 20,
        costByRoute: {},
        ...defaults,
      },
      {
        id: 'labels-bulk',
        match: { route: ['POST /v1/labels:batch'], identity: ['api_key'] },
        algorithm: 'token_bucket',
        rate: 10,
        period: 1000,
        burst: 20,
        costByRoute: { 'POST /v1/labels:batch': 10 },
        ...defaults,
      },
      {
        id: 'login-per-ip',
        match: { route: ['POST /v1/login'], identity: ['ip'] },
        algorithm: 'sliding_log',
        limit: 5,
        window: 60_000,
        costByRoute: {},
        ...defaults,
      },
    ])
  })

  it('gives the same model for a JSON file and the equivalent TypeScript objects', () => {
    const json = JSON.stringify({
      rules: [
        {
          id: 'growth',
          description: 'Growth plan',
          match: { plan: ['growth', 'scale'], identity: 'api_key' },
          algorithm: 'gcra',
          rate: 100,
          period_s: 60,
          burst: 50,
          cost_by_route: { 'POST /v1/labels:batch': 10, 'GET /v1/health': 0 },
          on_store_error: 'open',
        },
        {
          id: 'login',
          match: { route: 'POST /v1/login', identity: ['account', 'ip'] },
          algorithm: 'sliding_counter',
          limit: 5,
          window_s: 900,
          mode: 'shadow',
          on_store_error: 'closed',
          on_missing_identity: 'deny',
        },
        {
          id: 'daily',
          match: { identity: 'user', method: ['get', 'HEAD'] },
          algorithm: 'fixed_window',
          limit: 10_000,
          window_s: 86_400,
          cost: 2,
        },
      ],
    })
    const code: RuleConfig[] = [
      {
        id: 'growth',
        description: 'Growth plan',
        match: { plan: ['growth', 'scale'], identity: 'api_key' },
        algorithm: 'gcra',
        rate: 100,
        period: '1m',
        burst: 50,
        costByRoute: { 'POST /v1/labels:batch': 10, 'GET /v1/health': 0 },
        onStoreError: 'open',
      },
      {
        id: 'login',
        match: { route: 'POST /v1/login', identity: ['account', 'ip'] },
        algorithm: 'sliding_window',
        limit: 5,
        window: '15 minutes',
        mode: 'shadow',
        onStoreError: 'closed',
        onMissingIdentity: 'deny',
      },
      {
        id: 'daily',
        match: { identity: 'user', method: ['GET', 'head'] },
        algorithm: 'fixed_window',
        limit: 10_000,
        window: '1 day',
        cost: 2,
      },
    ]
    const fromFile = loadRulesText(json, 'json')
    expect(fromFile).toEqual(defineRules(code))
    expect(fromFile[1]).toMatchObject({ algorithm: 'sliding_window', window: 900_000 })
    expect(fromFile[2]?.match.method).toEqual(['GET', 'HEAD'])
    // The model is itself valid input, and frozen.
    expect(defineRules(fromFile)).toEqual(fromFile)
    expect(Object.isFrozen(fromFile[0]?.match.plan)).toBe(true)
  })

  it('accepts rate + period_s in a file as well as rate_per_s', () => {
    const [perSecond] = parseRules([
      { id: 'a', match: { identity: 'ip' }, algorithm: 'gcra', rate_per_s: 3, burst: 5 },
    ])
    const [ratePeriod] = parseRules([
      { id: 'a', match: { identity: 'ip' }, algorithm: 'gcra', rate: 3, period_s: 1, burst: 5 },
    ])
    expect(perSecond).toEqual(ratePeriod)
  })

  it('refuses text that is not YAML or JSON with ERR_RL_INVALID_RULE', () => {
    for (const [text, format] of [
      ['- id: a\n  match: {', 'yaml'],
      ['[{"id": "a",}]', 'json'],
    ] as const) {
      let caught: unknown
      try {
        loadRulesText(text, format)
      } catch (error) {
        caught = error
      }
      expect(isRateLimitError(caught) && caught.code).toBe('ERR_RL_INVALID_RULE')
      expect((caught as Error).message).toContain(`not valid ${format.toUpperCase()}`)
    }
  })
})

describe('the @tollgate/core/rules-file entry', () => {
  it('is the only place the YAML parser is imported from, so the main entry stays YAML-free', () => {
    const seen = new Set<string>()
    const visit = (url: URL) => {
      if (seen.has(url.href)) return
      seen.add(url.href)
      const source = readFileSync(url, 'utf8')
      expect(source, url.pathname).not.toMatch(/from 'yaml'/)
      for (const [, path] of source.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        visit(new URL(path!.replace(/\.js$/, '.ts'), url))
      }
    }
    visit(new URL('../index.ts', import.meta.url))
    expect(seen.size).toBeGreaterThan(20)
    const packageJson = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    )
    expect(packageJson.exports['./rules-file']['@tollgate/source']).toBe('./src/rules/load-text.ts')
  })
})
