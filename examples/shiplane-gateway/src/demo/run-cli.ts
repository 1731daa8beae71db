import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url))

/** Runs `pnpm demo`'s command (without pnpm) as a user would, for the tests. */
export function runDemoCli(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@tollgate/source', '--import', 'tsx', 'src/demo/main.ts'],
      { cwd: PACKAGE_DIR, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** The timeline row printed for a request, as a pattern over its cells (any spacing). */
export function rowPattern(cells: readonly string[]): RegExp {
  const escaped = cells.map((cell) => cell.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^\\s+${escaped.join('\\s+')}$`, 'm')
}
