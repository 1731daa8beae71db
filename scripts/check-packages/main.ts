/**
 * The published packages as a registry user meets them: packs every public package of the
 * workspace, lints the tarballs (manifest, README links, publint, Are the Types Wrong?), then
 * installs them with npm into fresh apps in a temporary folder and runs each README's first
 * example there. Exits non-zero with every problem found. Run by .ci/run; locally:
 * `pnpm check:packages` (needs the npm registry, and Redis on 127.0.0.1:6379 or REDIS_URL).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DOCS_URL } from '../../docs/.vitepress/project.js'
import { APPS, type App, type AppTools, SHARED_TOOLS } from './apps.js'
import { readmeLinkProblems, type Site } from './links.js'
import { publintProblems, typesProblems } from './lint-tarball.js'
import { manifestProblems, type Project, projectOf } from './manifest.js'
import { run, settleAll } from './process.js'
import { entryPointsApp, typescriptApp } from './typescript-app.js'
import { type PublicPackage, packPublicPackages, readManifest } from './workspace.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const work = mkdtempSync(join(tmpdir(), 'tollgate-packages-'))
const { KEEP_PACKAGE_APPS } = process.env
const started = Date.now()
const log = (line: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`)
const NPM_INSTALL = ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline']

async function main(): Promise<number> {
  await run('pnpm', ['run', 'build'], { cwd: root })
  // The site's build fails on a dead link between pages; README links are checked against it.
  // It first generates the API reference (TypeDoc), which fails on an undocumented export: about
  // a minute in all, longer while the packages are packed and installed alongside.
  const siteBuilt = run('pnpm', ['run', 'docs:build'], { cwd: root, timeoutMs: 360_000 })
  const toolsInstalled = installSharedTools()
  const packages = await packPublicPackages(root, join(work, 'tarballs'))
  log(`packed ${packages.map((pkg) => `${pkg.name}@${pkg.version}`).join(', ')}`)
  const project = projectOf(root, readManifest(root))
  await siteBuilt
  const site = { url: DOCS_URL, dist: join(root, 'docs', '.vitepress', 'dist') }

  const tools: AppTools = {
    shared: work,
    readme: (name) => readFileSync(join(byName(packages, name).unpacked, 'README.md'), 'utf8'),
  }
  const apps = [...APPS, typescriptApp(packages), entryPointsApp(packages)]
  const [lintProblems, appProblems] = await Promise.all([
    lintTarballs(packages, project, site),
    toolsInstalled.then(() => exerciseApps(apps, packages, tools)),
  ])
  // Every public package's README example runs somewhere, not only type-checks.
  const exercised = new Set(APPS.map((app) => app.tollgate[0]))
  const unexercised = packages
    .filter((pkg) => !exercised.has(pkg.name))
    .map((pkg) => `${pkg.name}: no app runs its README's first example (see apps.ts)`)
  const problems = [...unexercised, ...lintProblems, ...appProblems]
  for (const problem of problems) console.error(`✗ ${problem}`)
  log(problems.length === 0 ? 'all packages ready to publish' : `${problems.length} problems`)
  return problems.length === 0 ? 0 : 1
}

async function lintTarballs(packages: PublicPackage[], project: Project, site: Site) {
  const lints = packages.map((pkg) => async () => {
    const found = [
      ...manifestProblems(pkg, packages, project),
      ...readmeLinkProblems(pkg, packages, project, site),
      ...(await publintProblems(pkg)),
      ...(await typesProblems(pkg, root)),
    ]
    log(
      `${pkg.name}: ${found.length === 0 ? 'manifest, links, publint and attw clean' : 'problems'}`,
    )
    return found.map((problem) => `${pkg.name}: ${problem}`)
  })
  const results = await settleAll(lints, 2)
  return results.flatMap((result) =>
    result.status === 'fulfilled' ? result.value : [String(result.reason)],
  )
}

async function exerciseApps(apps: App[], packages: PublicPackage[], tools: AppTools) {
  const tasks = apps.map((app) => async () => {
    const appStarted = Date.now()
    const line = await installAndExercise(app, packages, tools)
    log(`${app.name} (${((Date.now() - appStarted) / 1000).toFixed(1)} s): ${line}`)
  })
  const results = await settleAll(tasks, 3)
  return results.flatMap((result, i) => {
    if (result.status === 'fulfilled') return []
    const reason = result.reason as Error & { output?: string }
    return [`app ${apps[i]!.name}: ${reason.message}${reason.output ? `\n${reason.output}` : ''}`]
  })
}

async function installSharedTools(): Promise<void> {
  const manifest = { name: 'shared-tools', private: true, dependencies: SHARED_TOOLS }
  writeFileSync(join(work, 'package.json'), JSON.stringify(manifest))
  await run('npm', NPM_INSTALL, { cwd: work })
  log(`installed the shared tools: ${Object.keys(SHARED_TOOLS).join(', ')}`)
}

function byName(packages: PublicPackage[], name: string): PublicPackage {
  const found = packages.find((pkg) => pkg.name === name)
  if (found === undefined) throw new Error(`${name} is not a public package of the workspace`)
  return found
}

/** The packages and their workspace dependencies, as `file:` tarball specs. */
function tarballDependencies(names: string[], packages: PublicPackage[]): Record<string, string> {
  const specs: Record<string, string> = {}
  const add = (name: string) => {
    if (specs[name] !== undefined) return
    const pkg = byName(packages, name)
    specs[name] = `file:${pkg.tarball}`
    const dependencies = Object.keys(pkg.manifest.dependencies ?? {})
    for (const dependency of dependencies) {
      if (packages.some((other) => other.name === dependency)) add(dependency)
    }
  }
  names.forEach(add)
  return specs
}

async function installAndExercise(app: App, packages: PublicPackage[], tools: AppTools) {
  const dir = join(work, 'apps', app.name)
  const dependencies = { ...tarballDependencies(app.tollgate, packages), ...app.dependencies }
  const manifest = { name: app.name, private: true, type: app.type, dependencies }
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
  for (const [file, text] of Object.entries(app.files(tools))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  await run('npm', NPM_INSTALL, { cwd: dir })
  // Caret ranges let npm install one core for every Tollgate package of the app.
  const tree = JSON.parse(
    await run('npm', ['ls', '--all', '--json', '@tollgate/core'], { cwd: dir }),
  )
  const cores = new Set<string>()
  const walk = (node: { version?: string; dependencies?: Record<string, unknown> }, name = '') => {
    if (name === '@tollgate/core') cores.add(`${node.version}`)
    for (const [child, value] of Object.entries(node.dependencies ?? {}))
      walk(value as never, child)
  }
  walk(tree)
  if (cores.size !== 1) throw new Error(`installed @tollgate/core ${[...cores].join(' and ')}`)
  return app.exercise(dir, tools)
}

main()
  .then((code) => {
    if (code === 0 && KEEP_PACKAGE_APPS === undefined) rmSync(work, { recursive: true })
    else console.error(`apps kept in ${work}`)
    process.exitCode = code
  })
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
