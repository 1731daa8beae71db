import { readFileSync } from 'node:fs'
import type { Rule } from '@tollgate/express'
import { loadRulesText } from '@tollgate/express/rules-file'

/** The rule file next to package.json. */
export const RULES_FILE = new URL('../rules.yaml', import.meta.url)

/** Reads and validates rules.yaml; a bad rule throws, naming the rule and the field. */
export function loadShiplaneRules(file: URL = RULES_FILE): readonly Rule[] {
  return loadRulesText(readFileSync(file, 'utf8'), 'yaml')
}
