/**
 * `@tollgate/core/rules-file`: rules from YAML or JSON text, in the spec's file shape. A separate
 * entry point, so apps that define rules in code never bundle the YAML parser.
 * @module @tollgate/core/rules-file
 */
import { RuleValidationError } from './issues.js'
import { duplicateJsonKey, lineAndColumn } from './json-duplicate-keys.js'
import { parseRules } from './parse-rules.js'
import type { Rule } from './types.js'
import { parseYamlText } from './yaml-document.js'

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
  // A byte-order mark, as some editors save UTF-8, is not part of the text.
  const body = text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text
  try {
    data = format === 'json' ? parseJsonText(body) : parseYamlText(body)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    const problem = `not valid ${format.toUpperCase()}: ${reason}`
    throw new RuleValidationError([{ field: 'rules', problem }])
  }
  return parseRules(data)
}

const BYTE_ORDER_MARK = 0xfeff

/** `JSON.parse`, refusing an object that names a key twice, as YAML does. */
function parseJsonText(text: string): unknown {
  const data: unknown = JSON.parse(text)
  const duplicate = duplicateJsonKey(text)
  if (duplicate !== undefined) {
    const where = lineAndColumn(text, duplicate.offset)
    throw new Error(`keys must be unique: ${JSON.stringify(duplicate.key)} again at ${where}`)
  }
  return data
}

export { parseRules } from './parse-rules.js'
export type { Rule } from './types.js'
