import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import { duplicateJsonKey } from './json-duplicate-keys.js'
import { loadRulesText, type RulesTextFormat } from './load-text.js'

const YAML = `rules:
  - id: per-ip
    match: { identity: ip }
    algorithm: token_bucket
    rate_per_s: 10
    burst: 20
`
const JSON_TEXT = JSON.stringify({
  rules: [
    {
      id: 'per-ip',
      match: { identity: 'ip' },
      algorithm: 'token_bucket',
      rate_per_s: 10,
      burst: 20,
    },
  ],
})

/** The one problem a text is refused with. */
function refusal(text: string, format: RulesTextFormat): string {
  try {
    loadRulesText(text, format)
  } catch (error) {
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_RULE')
    return (error as Error).message
  }
  throw new Error('the text was accepted')
}

describe('loadRulesText input', () => {
  it('reads a file that starts with a UTF-8 byte-order mark', () => {
    expect(loadRulesText(`\uFEFF${YAML}`, 'yaml')).toEqual(loadRulesText(YAML, 'yaml'))
    expect(loadRulesText(`\uFEFF${JSON_TEXT}`, 'json')).toEqual(loadRulesText(JSON_TEXT, 'json'))
  })

  it('refuses a key given twice, in JSON as in YAML, naming the key and where', () => {
    const yaml = YAML.replace('    burst: 20\n', '    burst: 20\n    burst: 30\n')
    expect(refusal(yaml, 'yaml')).toMatch(/not valid YAML: .*"burst" again at line 7, column 5/)
    const json = JSON_TEXT.replace('"burst":20', '"burst":20,"burst":30')
    expect(refusal(json, 'json')).toMatch(/not valid JSON: .*"burst" again at line 1/)
    const nested = `{"rules": [{"id": "a", "match": {"identity": "ip", "ident\\u0069ty": "user"}}]}`
    expect(refusal(nested, 'json')).toMatch(/"identity" again/)
    const yamlNested = 'rules:\n  - id: a\n    match: { identity: ip, identity: user }\n'
    expect(refusal(yamlNested, 'yaml')).toMatch(/"identity" again at line 3/)
  })

  it('reports .inf and .nan as what they are, not as null', () => {
    const infinite = YAML.replace('rate_per_s: 10', 'rate: 1\n    period_s: .inf')
    expect(refusal(infinite, 'yaml')).toMatch(/period_s: .*got Infinity/)
    expect(refusal(YAML.replace('burst: 20', 'burst: .nan'), 'yaml')).toMatch(/burst: .*got NaN/)
  })
})

describe('duplicateJsonKey', () => {
  it('finds nothing in what JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateJsonKey(JSON.stringify(value, null, 1) ?? 'null')).toBeUndefined()
      }),
    )
  })

  it('finds a key written twice in any object, however deep', () => {
    const withDuplicate = fc
      .tuple(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), fc.nat(3))
      .map(([object, key, depth]) => {
        const entries = Object.entries(object).filter(([other]) => other !== key)
        const members = [[key, 1], ...entries, [key, 2]].map(
          ([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`,
        )
        let text = `{${members.join(',')}}`
        for (let i = 0; i < depth; i++) text = `[{"x": ${text}}]`
        return { text, key }
      })
    fc.assert(
      fc.property(withDuplicate, ({ text, key }) => {
        JSON.parse(text) // the text is valid JSON
        expect(duplicateJsonKey(text)?.key).toBe(key)
      }),
    )
  })
})
