/**
 * What a registry user reads in a packed package.json: installable ranges, one core for every
 * adapter, no runtime dependency beyond the workspace's own packages, and the metadata npm shows.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Manifest, PublicPackage } from './workspace.js'

/** The project's URLs, from the root package.json: every package must use the same ones. */
export type Project = { root: string; repository: string; homepage: string; bugs: string }

export function projectOf(root: string, manifest: Manifest): Project {
  const { repository, bugs, homepage } = manifest
  if (repository?.url === undefined || bugs?.url === undefined || homepage === undefined) {
    throw new Error('the root package.json needs repository.url, bugs.url and homepage')
  }
  return { root, repository: repository.url, homepage, bugs: bugs.url }
}

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const
const TEST_FILE = /\.test\.[cm]?[jt]s$|(^|\/)test-[^/]*$|\.fixture\.[cm]?[jt]s$/

export function manifestProblems(
  pkg: PublicPackage,
  all: PublicPackage[],
  project: Project,
): string[] {
  const { manifest } = pkg
  const problems: string[] = []
  if (JSON.stringify(manifest).includes('workspace:')) {
    problems.push('ships a workspace: range, which npm cannot install (publish with pnpm)')
  }
  for (const field of DEPENDENCY_FIELDS) {
    const ranges = manifest[field] ?? {}
    for (const [name, range] of Object.entries(ranges)) {
      const sibling = all.find((other) => other.name === name)
      if (sibling !== undefined && range !== `^${sibling.version}`) {
        problems.push(`${field}.${name} is ${range}, not ^${sibling.version}: apps would get two`)
      }
      // The core has no runtime dependency and each adapter only its framework, as a peer. A
      // command (a package with a bin) is the app itself: npx installs what it runs on with it.
      if (field === 'dependencies' && sibling === undefined && manifest.bin === undefined) {
        problems.push(`dependencies.${name}: every install pays for it (make it an optional peer)`)
      }
    }
  }
  const { repository } = manifest
  if (typeof manifest.license !== 'string') problems.push('has no license field')
  if (!['LICENSE', 'LICENSE.md'].some((file) => existsSync(join(pkg.unpacked, file)))) {
    problems.push('ships no LICENSE file')
  }
  if (!existsSync(join(pkg.unpacked, 'README.md'))) problems.push('ships no README.md')
  if (repository?.url !== project.repository) {
    problems.push(`repository.url is ${repository?.url}, not ${project.repository}`)
  }
  const directory = relative(project.root, pkg.dir)
  if (repository?.directory !== directory) {
    problems.push(`repository.directory is ${repository?.directory}, not ${directory}`)
  }
  if (typeof manifest.homepage !== 'string' || !manifest.homepage.startsWith(project.homepage)) {
    problems.push(`homepage is ${manifest.homepage}, not a page of ${project.homepage}`)
  }
  if (manifest.bugs?.url !== project.bugs) {
    problems.push(`bugs.url is not ${project.bugs}`)
  }
  if (typeof manifest.engines?.node !== 'string') {
    problems.push('has no engines.node')
  }
  const shipped = filesIn(pkg.unpacked)
  for (const file of shipped) {
    if (TEST_FILE.test(file)) problems.push(`ships a test file: ${file}`)
  }
  for (const [condition, target] of exportTargets(manifest.exports)) {
    if (condition === SOURCE_CONDITION) continue
    if (!shipped.includes(target.replace(/^\.\//, ''))) {
      problems.push(`exports names ${target} (${condition}), which the tarball does not hold`)
    }
  }
  return problems
}

/**
 * The workspace's own condition: it points vitest, tsc and tsx at each package's TypeScript
 * sources. The tarballs ship dist/ only, so its targets are absent there; nothing outside the
 * workspace asks for the condition (Node, TypeScript and bundlers apply a custom condition only
 * when told to), so a user resolves every entry to dist/ as before.
 */
const SOURCE_CONDITION = '@tollgate/source'

/** Every file an exports map points at, with the condition that leads to it. */
function exportTargets(exports: unknown, condition = 'default'): Array<[string, string]> {
  if (typeof exports === 'string') return [[condition, exports]]
  if (exports === null || typeof exports !== 'object') return []
  return Object.entries(exports).flatMap(([key, value]) =>
    exportTargets(value, key.startsWith('.') ? condition : key),
  )
}

function filesIn(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    return entry.isDirectory() ? filesIn(dir, path) : [path]
  })
}
