/**
 * What Tollgate adds to a user's disk: packs @tollgate/core and @tollgate/express from their
 * builds (the package script builds them first) the way `pnpm publish` packs them, installs them
 * with npm into a fresh Express app in a temporary folder, and compares its node_modules with the
 * same app without Tollgate and with express-rate-limit (from the npm registry) instead. Also
 * weighs each tarball and what kinds of file fill the installed core.
 *
 *   pnpm --filter @tollgate/benchmarks bench:install-size [--write] [--keep]
 *
 * Sizes are apparent bytes (the sum of the files' lengths, as the tarball holds them), which do
 * not depend on the file system; `du -sk` (blocks on this disk) is printed beside them. `--write`
 * replaces the "## Install size" section of docs/benchmarks.md; `--keep` keeps the apps.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The peers' versions as a user would take them today (npm resolves the ranges). */
const EXPRESS = '^5.1.0'
const EXPRESS_RATE_LIMIT = '^8.0.0'
const NPM_INSTALL = ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline']

const work = mkdtempSync(join(tmpdir(), 'tollgate-install-size-'))
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })

type Weighed = { bytes: number; files: number; diskKb: number }

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return filesUnder(path)
    return entry.isFile() ? [path] : []
  })
}

function weigh(dir: string): Weighed {
  const files = filesUnder(dir)
  const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0)
  const diskKb = Number(run('du', ['-sk', dir], root).split('\t')[0])
  return { bytes, files: files.length, diskKb }
}

/** The tarball of `packages/<name>`, packed without scripts (the build has run). */
function pack(name: string): { tarball: string; bytes: number } {
  const into = join(work, 'tarballs')
  mkdirSync(into, { recursive: true })
  const args = ['pack', '--pack-destination', into, '--json', '--config.ignore-scripts=true']
  const { filename } = JSON.parse(run('pnpm', args, join(root, 'packages', name)))
  const tarball = filename.startsWith('/') ? filename : join(into, filename)
  return { tarball, bytes: statSync(tarball).size }
}

function installApp(name: string, dependencies: Record<string, string>): Weighed {
  const dir = join(work, name)
  mkdirSync(dir, { recursive: true })
  const manifest = { name, private: true, type: 'module', dependencies }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
  run('npm', NPM_INSTALL, dir)
  return weigh(join(dir, 'node_modules'))
}

const KINDS: Array<[kind: string, test: (path: string) => boolean]> = [
  ['source maps', (path) => path.endsWith('.map')],
  ['types (.d.ts, .d.cts)', (path) => /\.d\.c?ts$/.test(path)],
  ['TypeScript sources (src/)', (path) => path.startsWith('src/')],
  ['JavaScript (.js, .cjs)', (path) => /\.c?js$/.test(path)],
  ['other (package.json, README, LICENSE)', () => true],
]

/** The installed core's bytes by kind of file. */
function coreByKind(dir: string): Array<[string, number]> {
  const totals = new Map(KINDS.map(([kind]) => [kind, 0]))
  for (const file of filesUnder(dir)) {
    const path = file.slice(dir.length + 1)
    const [kind] = KINDS.find(([, test]) => test(path))!
    totals.set(kind, totals.get(kind)! + statSync(file).size)
  }
  return [...totals]
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`
const kb = (bytes: number) => `${(bytes / 1e3).toFixed(1)} KB`

const tarballs = { core: pack('core'), express: pack('express') }
const bare = installApp('express-only', { express: EXPRESS })
const tollgate = installApp('express-tollgate', {
  express: EXPRESS,
  '@tollgate/core': `file:${tarballs.core.tarball}`,
  '@tollgate/express': `file:${tarballs.express.tarball}`,
})
const peer = installApp('express-rate-limit', {
  express: EXPRESS,
  'express-rate-limit': EXPRESS_RATE_LIMIT,
})
const installedCore = join(work, 'express-tollgate', 'node_modules', '@tollgate', 'core')
const installedCoreSize = weigh(installedCore)
const installedExpress = weigh(
  join(work, 'express-tollgate', 'node_modules', '@tollgate', 'express'),
)

const row = (name: string, app: Weighed) =>
  `| ${name} | ${mb(app.bytes)} | ${app.files} | ${mb(app.bytes - bare.bytes)} | ${(
    (app.diskKb - bare.diskKb) / 1e3
  ).toFixed(2)} MB |`

const section = `## Install size

What an Express app's \`node_modules\` grows by with Tollgate, from the packed tarballs installed
with npm into a fresh app, against the same app with express-rate-limit from the registry.
Apparent bytes (the files' lengths; \`du -sk\` blocks on this disk beside them). Node
${process.version}, npm ${run('npm', ['--version'], root).trim()}:

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:install-size --write   # builds core and Express first
\`\`\`

| app | node_modules | files | added over Express alone | added on disk (du) |
|---|---|---|---|---|
${row('express', bare)}
${row('express + @tollgate/express', tollgate)}
${row('express + express-rate-limit', peer)}

| tarball | packed | installed | files installed |
|---|---|---|---|
| @tollgate/core | ${kb(tarballs.core.bytes)} | ${mb(installedCoreSize.bytes)} | ${installedCoreSize.files} |
| @tollgate/express | ${kb(tarballs.express.bytes)} | ${kb(installedExpress.bytes)} | ${installedExpress.files} |

The installed core by kind of file:

| kind | bytes |
|---|---|
${coreByKind(installedCore)
  .map(([kind, bytes]) => `| ${kind} | ${kb(bytes)} |`)
  .join('\n')}
`

console.log(section)
if (process.argv.includes('--write')) await replaceDocSection('Install size', section)
if (process.argv.includes('--keep')) console.log(`apps kept in ${work}`)
else rmSync(work, { recursive: true })
