/** A README's first code example, as a user would paste it into their app. */

export function firstExample(readme: string, source: string): string {
  const block = /^```(?:ts|typescript|js|javascript)(?: esm)?\n([\s\S]*?)^```/m.exec(readme)
  if (block === null) throw new Error(`${source} has no TypeScript or JavaScript example`)
  return block[1]!
}

/**
 * The same example in a CommonJS file: its `import` declarations become `require` calls (the
 * forms READMEs use: a default import, named imports, or both). Anything else stays as written,
 * so an example that needs ES modules fails here as it would in the user's CommonJS app.
 */
export function toCommonJs(example: string): string {
  return example.replace(
    /^import\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\}\s*)?from\s+'([^']+)'[ \t]*;?$/gm,
    (_line, defaultName: string | undefined, named: string | undefined, from: string) => {
      const required = `require(${JSON.stringify(from)})`
      const lines: string[] = []
      if (defaultName !== undefined) lines.push(`const ${defaultName} = ${required}`)
      if (named !== undefined) {
        const bindings = named.replace(/\s+as\s+/g, ': ').trim()
        lines.push(`const { ${bindings} } = ${required}`)
      }
      return lines.join('\n')
    },
  )
}
