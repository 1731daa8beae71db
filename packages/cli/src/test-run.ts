import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runCli } from './cli.js'

/** The package folder: the CLI's paths in tests are relative to it. */
export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))

/** Runs the CLI in-process, files read relative to the package; written files are kept. */
export function run(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const written = new Map<string, string>()
  const code = runCli(argv, {
    readFile: (path) => readFileSync(new URL(path, `file://${PACKAGE_DIR}`), 'utf8'),
    writeFile: (path, text) => written.set(path, text),
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  })
  return { code, out: out.join('\n'), err: err.join('\n'), written }
}
