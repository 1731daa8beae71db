import { parse as parseYaml } from 'yaml'
import { RuleValidationError } from './issues.js'
import { parseRules } from './parse-rules.js'
import type { Rule } from './types.js'

/** The text formats `loadRulesText` reads. */
export type RulesTextFormat = 'yaml' | 'json'

/**
 * Reads rules from YAML or JSON text in the spec's file shape (see `parseRules`) and validates
 * them. Exported from `@tollgate/core/rules-file` so that apps which define rules in code do not
 * bundle a YAML parser. The core reads no files (it runs on edge runtimes too): read the file
 * with your runtime's API and pass the text.
 * @example
 * import { readFileSync } from 'node:fs'
 * import { loadRulesText } from '@tollgate/core/rules-file'
 * const rules = loadRulesText(readFileSync('rules.yaml', 'utf8'), 'yaml')
 */
export function loadRulesText(text: string, format: RulesTextFormat): readonly Rule[] {
  let data: unknown
  try {
    data = format === 'json' ? JSON.parse(text) : parseYaml(text, { prettyErrors: true })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    const problem = `not valid ${format.toUpperCase()}: ${reason}`
    throw new RuleValidationError([{ rule: '#0', field: 'rules', problem }])
  }
  return parseRules(data)
}

export { parseRules } from './parse-rules.js'
export type { Rule } from './types.js'
