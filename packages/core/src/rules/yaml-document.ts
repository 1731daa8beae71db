import { isScalar, LineCounter, type Node, parseDocument, visit } from 'yaml'
import { lineAndColumn } from './json-duplicate-keys.js'

/**
 * Parses YAML text to plain data, refusing a mapping that names a key twice. The parser's own
 * check compares each key with every earlier one (a 20,000-key mapping takes seconds), so it is
 * off and done here with one set per mapping, comparing keys as the parser does (scalars by
 * value). Throws an `Error` whose message says what and where.
 */
export function parseYamlText(text: string): unknown {
  const lineCounter = new LineCounter()
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter })
  const error = document.errors[0]
  if (error !== undefined) throw error
  let duplicate: { key: unknown; offset: number } | undefined
  visit(document, {
    Map(_, map) {
      const seen = new Set<unknown>()
      for (const { key } of map.items) {
        const value = isScalar(key) ? key.value : key
        if (seen.has(value)) {
          duplicate = { key: value, offset: (key as Node | null)?.range?.[0] ?? 0 }
          return visit.BREAK
        }
        seen.add(value)
      }
      return undefined
    },
  })
  if (duplicate !== undefined) {
    const where = lineAndColumn(text, duplicate.offset)
    throw new Error(`Map keys must be unique: ${JSON.stringify(duplicate.key)} again at ${where}`)
  }
  return document.toJS()
}
