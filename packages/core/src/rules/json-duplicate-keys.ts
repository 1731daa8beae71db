/**
 * The first key that appears twice in one object of a JSON text, which `JSON.parse` silently
 * resolves to the last value (YAML refuses the same document). Reads text that `JSON.parse` has
 * already accepted, in one pass: keys are compared as `JSON.parse` reads them (`"a"` and
 * `"\u0061"` are one key).
 */
export function duplicateJsonKey(
  text: string,
): { readonly key: string; readonly offset: number } | undefined {
  /** One frame per open object (its keys so far) or array (null). */
  const stack: (Set<string> | null)[] = []
  let expectingKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(text, i)
      const keys = stack[stack.length - 1]
      if (expectingKey && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string
        if (keys.has(key)) return { key, offset: i }
        keys.add(key)
        expectingKey = false
      }
      i = end
    } else if (c === OPEN_BRACE) {
      stack.push(new Set())
      expectingKey = true
    } else if (c === OPEN_BRACKET) {
      stack.push(null)
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      stack.pop()
    } else if (c === COMMA) {
      expectingKey = stack[stack.length - 1] != null
    }
  }
  return undefined
}

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const COMMA = 44

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === BACKSLASH) i++
    else if (c === QUOTE) return i
  }
  return text.length
}

/** `line L, column C` (both from 1) of an offset in a text. */
export function lineAndColumn(text: string, offset: number): string {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return `line ${line}, column ${offset - lineStart + 1}`
}
