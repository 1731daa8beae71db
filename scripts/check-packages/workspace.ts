/**
 * The workspace's public packages, read from their package.json files (through pnpm, which
 * knows the workspace globs), packed the way `pnpm publish` packs them and unpacked for reading.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './process.js'

export type Manifest = {
  name: string
  version: string
  private?: boolean
  license?: string
  homepage?: string
  repository?: { url?: string; directory?: string }
  bugs?: { url?: string }
  engines?: { node?: string }
  bin?: Record<string, string>
  scripts?: { prepublishOnly?: string; [name: string]: string | undefined }
  exports?: Record<string, unknown>
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

export type PublicPackage = {
  name: string
  version: string
  /** The package's folder in the workspace. */
  dir: string
  /** The packed .tgz, as the registry would receive it. */
  tarball: string
  /** The tarball unpacked: the folder holding its package.json. */
  unpacked: string
  /** The package.json inside the tarball (workspace ranges already rewritten). */
  manifest: Manifest
}

/** Every package of the workspace (pnpm knows the globs), with its folder. */
export async function workspacePackages(root: string): Promise<Array<Manifest & { dir: string }>> {
  const out = await run('pnpm', ['-r', 'ls', '--depth', '-1', '--json'], { cwd: root })
  const listed: Array<{ path: string }> = JSON.parse(out)
  return listed.map((entry) => ({ ...readManifest(entry.path), dir: entry.path }))
}

export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
}

/** Packs every public package into `into` with pnpm (no scripts: the build has run). */
export async function packPublicPackages(root: string, into: string): Promise<PublicPackage[]> {
  const publics = (await workspacePackages(root)).filter((manifest) => manifest.private !== true)
  mkdirSync(join(into, 'unpacked'), { recursive: true })
  return Promise.all(
    publics.map(async ({ name, version, dir }) => {
      const args = ['pack', '--pack-destination', into, '--json', '--config.ignore-scripts=true']
      const packed: { filename: string } = JSON.parse(await run('pnpm', args, { cwd: dir }))
      const tarball = packed.filename.startsWith('/')
        ? packed.filename
        : join(into, packed.filename)
      const unpacked = join(into, 'unpacked', name.replace('/', '+'))
      mkdirSync(unpacked, { recursive: true })
      await run('tar', ['-xzf', tarball, '-C', unpacked], { cwd: into })
      const packageDir = join(unpacked, 'package')
      return {
        name,
        version,
        dir,
        tarball,
        unpacked: packageDir,
        manifest: readManifest(packageDir),
      }
    }),
  )
}
