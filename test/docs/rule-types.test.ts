/**
 * What a TypeScript user meets while writing rules, checked through the language service an
 * editor uses, against the built packages: autocomplete offers every algorithm in a new rule,
 * fields of the other kind of rule are refused, a bare number is not a duration, and rules
 * declared apart, whose types widened, are refused with the fix.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const file = join(here, 'rule-types-sample.ts')
const options: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  types: ['node'],
  skipLibCheck: true,
}

/** A language service over one sample file whose text can be changed. */
function service() {
  let code = ''
  let version = 0
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: (name) => (name === file ? String(version) : '0'),
    getScriptSnapshot: (name) => {
      if (name === file) return ts.ScriptSnapshot.fromString(code)
      return ts.sys.fileExists(name)
        ? ts.ScriptSnapshot.fromString(readFileSync(name, 'utf8'))
        : undefined
    },
    getCurrentDirectory: () => here,
    getCompilationSettings: () => options,
    getDefaultLibFileName: ts.getDefaultLibFilePath,
    fileExists: (name) => name === file || ts.sys.fileExists(name),
    readFile: (name) => (name === file ? code : ts.sys.readFile(name)),
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  }
  const languageService = ts.createLanguageService(host)
  const set = (text: string) => {
    code = `import { rateLimit } from '@tollgate/express'\n${text}`
    version++
  }
  return {
    completionsAt(text: string, marker: string): string[] {
      set(text.replace(marker, ''))
      const at = code.indexOf(text.slice(0, text.indexOf(marker))) + text.indexOf(marker)
      const found = languageService.getCompletionsAtPosition(file, at, {})
      return (found?.entries ?? []).map((entry) => entry.name)
    },
    errors(text: string): string[] {
      set(text)
      return languageService
        .getSemanticDiagnostics(file)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '))
    },
    /** Each error's text, and its lines as tsc prints them. */
    diagnostics(text: string): { text: string; lines: string[] }[] {
      set(text)
      return languageService.getSemanticDiagnostics(file).map((d) => {
        const lines = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')
        return { text: lines.join(' '), lines }
      })
    },
  }
}

const ALGORITHMS = [
  'token_bucket',
  'gcra',
  'leaky_bucket',
  'fixed_window',
  'sliding_log',
  'sliding_window',
]

describe('rule types', () => {
  const editor = service()

  it('offer all six algorithms in a fresh rule, and after either kind of field', () => {
    for (const fields of ['', 'rate: 10, ', 'limit: 5, ']) {
      const text = `rateLimit([{ id: 'r', match: { identity: 'ip' }, ${fields}algorithm: '|' }])`
      expect(editor.completionsAt(text, '|'), fields).toEqual(expect.arrayContaining(ALGORITHMS))
    }
  }, 60_000)

  it("refuse the other kind's fields, and a duration without a unit", () => {
    const rule = (fields: string) =>
      editor.errors(`rateLimit([{ id: 'r', match: { identity: 'ip' }, ${fields} }])`)
    expect(rule("algorithm: 'sliding_log', limit: 5, window: '1m'")).toEqual([])
    expect(rule("algorithm: 'gcra', rate: 1, period: '2s', burst: 5")).toEqual([])
    expect(rule("algorithm: 'sliding_log', limit: 5, window: '1m', burst: 5").join()).toContain(
      "'burst' does not exist",
    )
    expect(rule("algorithm: 'gcra', rate: 1, burst: 5, window: '1m'").join()).toContain(
      "'window' does not exist",
    )
    expect(rule("algorithm: 'sliding_log', limit: 5, window: 60").join()).toMatch(
      /Type 'number' is not assignable/,
    )
  }, 60_000)

  it('refuse rules declared apart (algorithm: string) with a short error that names the fix', () => {
    const declared = (suffix: string) =>
      `const rules = [{ id: 'r', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]${suffix}\n`
    const calls = [
      'rateLimit(rules)',
      "import { createLimiter } from '@tollgate/express'\ncreateLimiter({ rules })",
    ]
    for (const call of calls) {
      const errors = editor.diagnostics(declared('') + call)
      expect(errors, call).toHaveLength(1)
      const [error] = errors
      expect(error!.text).toContain('defineRules([...])')
      expect(error!.text).toContain('`as const`')
      // The fix is on the error's first or second line, and the error is a few lines long.
      expect(error!.lines.slice(0, 2).join('\n'), call).toContain('defineRules([...])')
      expect(error!.lines.length, call).toBeLessThanOrEqual(3)
    }
    for (const fixed of [' as const', ' satisfies RuleConfig[]']) {
      const typed = `import type { RuleConfig } from '@tollgate/express'\n${declared(fixed)}`
      for (const call of calls) expect(editor.errors(typed + call), fixed).toEqual([])
    }
  }, 60_000)
})
