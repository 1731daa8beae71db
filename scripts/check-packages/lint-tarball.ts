/**
 * The ecosystem's two packaging linters on the packed tarball: publint (exports, files, formats)
 * with warnings counted as errors, and Are the Types Wrong? (types under node10, node16 from CJS
 * and from ESM, and bundler resolution, for every entry point the exports map declares).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { CommandError, run } from './process.js'
import type { PublicPackage } from './workspace.js'

export async function publintProblems(pkg: PublicPackage): Promise<string[]> {
  const tarball = readFileSync(pkg.tarball)
  const { messages, pkg: manifest } = await publint({
    pack: {
      tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.length),
    },
    level: 'suggestion',
    strict: true,
  })
  return messages
    .filter((message) => message.type !== 'suggestion')
    .map((message) => `publint: ${formatMessage(message, manifest) ?? message.code}`)
}

export async function typesProblems(pkg: PublicPackage, root: string): Promise<string[]> {
  const attw = join(root, 'node_modules', '.bin', 'attw')
  try {
    await run(attw, [pkg.tarball, '--format', 'ascii', '--no-color', '--profile', 'strict'], {
      cwd: root,
    })
    return []
  } catch (error) {
    if (!(error instanceof CommandError)) throw error
    return [`@arethetypeswrong/cli found problems:\n${error.output}`]
  }
}
