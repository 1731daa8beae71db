/**
 * The ```ts blocks of the READMEs and docs, as samples to compile. A block whose fence says
 * `ts fragment` is an excerpt that needs context it does not show (an `app`, a `req`) and is
 * not compiled; `ts esm` uses top-level await, which a CommonJS app cannot, and is compiled
 * only as ESM. Every other block must compile as it is, as a file of a fresh app.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

export type Sample = {
  /** `docs/adapters/express.md:11`: where the block's first line of code is. */
  readonly where: string
  readonly code: string
  readonly kind: 'module' | 'esm' | 'fragment'
}

const FENCE = /^```(ts|typescript)([^\n]*)\n([\s\S]*?)^```/gm

/**
 * The Markdown files whose samples are checked: READMEs and everything under docs/ but the API
 * reference (docs/api), which `pnpm docs:api` generates from the doc comments.
 */
export function markdownFiles(root: string): string[] {
  const files = ['README.md']
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (path !== join('docs', 'api')) walk(path)
      } else if (entry.name.endsWith('.md')) files.push(path)
    }
  }
  walk('docs')
  for (const parent of ['packages', 'examples']) {
    for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) {
      const readme = join(parent, entry.name, 'README.md')
      if (entry.isDirectory() && readdirSync(join(root, parent, entry.name)).includes('README.md'))
        files.push(readme)
    }
  }
  return files.sort()
}

export function samplesOf(root: string, file: string): Sample[] {
  const text = readFileSync(join(root, file), 'utf8')
  const samples: Sample[] = []
  for (const match of text.matchAll(FENCE)) {
    const info = match[2]!.trim()
    if (info !== '' && info !== 'fragment' && info !== 'esm') {
      throw new Error(
        `${file}: unknown code fence "ts ${info}" (use "ts", "ts esm" or "ts fragment")`,
      )
    }
    const line = text.slice(0, match.index).split('\n').length + 1
    samples.push({
      where: `${relative(root, join(root, file))}:${line}`,
      code: match[3]!,
      kind: info === '' ? 'module' : (info as Sample['kind']),
    })
  }
  return samples
}
