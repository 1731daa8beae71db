import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/**
 * Replaces one `## heading` section of docs/benchmarks.md with `section` (which starts with that
 * heading), leaving every other section as it is; appends it when the heading is not there yet.
 */
export async function replaceDocSection(heading: string, section: string): Promise<void> {
  const path = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url))
  const doc = await readFile(path, 'utf8').catch(() => '# Benchmarks\n')
  const start = doc.indexOf(`\n## ${heading}\n`)
  if (start === -1) {
    await writeFile(path, `${doc.trimEnd()}\n\n${section.trimEnd()}\n`)
    return
  }
  const next = doc.indexOf('\n## ', start + 1)
  const rest = next === -1 ? '' : doc.slice(next)
  await writeFile(path, `${doc.slice(0, start + 1)}${section.trimEnd()}\n${rest}`)
}
