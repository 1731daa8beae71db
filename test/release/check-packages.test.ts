// The package checks refuse what made the packages unusable from the registry: workspace ranges,
// exact pins between siblings, a runtime dependency everyone pays for, missing metadata or
// LICENSE, and README links that only work inside the repository.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { linksIn, readmeLinkProblems } from '../../scripts/check-packages/links.js'
import { manifestProblems, type Project } from '../../scripts/check-packages/manifest.js'
import { firstExample, toCommonJs } from '../../scripts/check-packages/readme-example.js'
import type { Manifest, PublicPackage } from '../../scripts/check-packages/workspace.js'

const scratch = mkdtempSync(join(tmpdir(), 'tollgate-check-'))
afterAll(() => rmSync(scratch, { recursive: true }))

const project: Project = {
  root: scratch,
  repository: 'git+https://github.com/tollgate/tollgate.git',
  homepage: 'https://tollgate.github.io/tollgate/',
  bugs: 'https://github.com/tollgate/tollgate/issues',
}

let count = 0
function packed(manifest: Partial<Manifest>, files: Record<string, string>): PublicPackage {
  const name = manifest.name ?? '@tollgate/express'
  const dir = join(scratch, 'packages', `p${++count}`)
  const unpacked = join(scratch, 'unpacked', `p${count}`)
  mkdirSync(unpacked, { recursive: true })
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(unpacked, file)), { recursive: true })
    writeFileSync(join(unpacked, file), text)
  }
  const full = { name, version: '0.2.0', ...manifest } as Manifest
  return { name, version: full.version, dir, tarball: '', unpacked, manifest: full }
}

const good = (dir: string): Partial<Manifest> => ({
  license: 'MIT',
  homepage: 'https://tollgate.github.io/tollgate/adapters/express',
  repository: { url: project.repository, directory: dir },
  bugs: { url: project.bugs },
  engines: { node: '>=20' },
  dependencies: { '@tollgate/core': '^0.2.0' },
  peerDependencies: { express: '^4.0.0 || ^5.0.0' },
})
const core = packed({ name: '@tollgate/core' }, {})
const files = { LICENSE: 'MIT', 'README.md': '# x\n' }

describe('manifestProblems', () => {
  it('accepts a complete manifest with a caret range on core', () => {
    const pkg = packed(good(`packages/p${count + 1}`), files)
    expect(manifestProblems(pkg, [core, pkg], project)).toEqual([])
  })

  it.each([
    ['a workspace range', { '@tollgate/core': 'workspace:*' }, /workspace: range/],
    ['an exact pin on core', { '@tollgate/core': '0.2.0' }, /not \^0\.2\.0/],
    ['a runtime dependency', { '@tollgate/core': '^0.2.0', yaml: '^2.0.0' }, /yaml: every install/],
  ])('refuses %s', (_what, dependencies, problem) => {
    const pkg = packed({ ...good(`packages/p${count + 1}`), dependencies }, files)
    expect(manifestProblems(pkg, [core, pkg], project).join('\n')).toMatch(problem)
  })

  it('refuses an export whose file the tarball lacks, but not the workspace source condition', () => {
    const exports = {
      '.': {
        '@tollgate/source': './src/index.ts',
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
      './package.json': './package.json',
    }
    const dist = {
      'package.json': '{}',
      'dist/index.d.ts': '',
      'dist/index.js': '',
      'dist/index.d.cts': '',
    }
    const pkg = packed({ ...good(`packages/p${count + 1}`), exports }, { ...files, ...dist })
    expect(manifestProblems(pkg, [core, pkg], project)).toEqual([
      'exports names ./dist/index.cjs (default), which the tarball does not hold',
    ])
    const whole = packed(
      { ...good(`packages/p${count + 1}`), exports },
      { ...files, ...dist, 'dist/index.cjs': '' },
    )
    expect(manifestProblems(whole, [core, whole], project)).toEqual([])
  })

  it('names every missing piece of metadata and the LICENSE file', () => {
    const pkg = packed({ dependencies: {} }, { 'README.md': '# x\n', 'src/a.test.ts': '' })
    const problems = manifestProblems(pkg, [core, pkg], project).join('\n')
    for (const missing of [/no license field/, /no LICENSE file/, /repository\.url/]) {
      expect(problems).toMatch(missing)
    }
    for (const missing of [
      /homepage/,
      /bugs\.url/,
      /engines\.node/,
      /test file: src\/a\.test\.ts/,
    ]) {
      expect(problems).toMatch(missing)
    }
  })
})

describe('readmeLinkProblems', () => {
  const dist = join(scratch, 'site')
  mkdirSync(join(dist, 'reference'), { recursive: true })
  writeFileSync(join(dist, 'reference', 'rules.html'), '<h2 id="costs">Costs</h2>')
  const site = { url: project.homepage, dist }

  it('accepts site pages and anchors that exist, npm pages of siblings and headings', () => {
    const readme = [
      '# Usage',
      '[rules](https://tollgate.github.io/tollgate/reference/rules#costs)',
      '[core](https://www.npmjs.com/package/@tollgate/core) [up](#usage)',
      '```ts\n[not a link](../../docs/x.md)\n```',
    ].join('\n')
    const pkg = packed({}, { 'README.md': readme })
    expect(readmeLinkProblems(pkg, [core, pkg], project, site)).toEqual([])
  })

  it('refuses repository-relative paths, missing pages and anchors, unknown packages', () => {
    const readme = [
      '[guide](../../docs/adapters/express.md)',
      '[gone](https://tollgate.github.io/tollgate/reference/nope)',
      '[anchor](https://tollgate.github.io/tollgate/reference/rules#nope)',
      '[other](https://www.npmjs.com/package/@tollgate/fastify)',
    ].join('\n')
    const pkg = packed({}, { 'README.md': readme })
    const problems = readmeLinkProblems(pkg, [core, pkg], project, site)
    expect(problems).toEqual([
      expect.stringMatching(/express\.md: a relative path to a file the tarball does not hold/),
      expect.stringMatching(/nope: no such page/),
      expect.stringMatching(/#nope: the page has no #nope/),
      expect.stringMatching(/fastify: not a public package/),
    ])
  })

  it('finds Markdown and HTML links outside code', () => {
    expect(linksIn('[a](x.md) `[b](y.md)` <a href="z.md">z</a>')).toEqual(['x.md', 'z.md'])
  })
})

describe('README examples', () => {
  it('takes the first TypeScript block and rewrites its imports for CommonJS', () => {
    const readme =
      "```sh\nnpm i\n```\n```ts\nimport express from 'express'\nimport { a, b as c } from 'x'\n```\n```ts\nlater\n```"
    expect(toCommonJs(firstExample(readme, 'pkg'))).toBe(
      'const express = require("express")\nconst { a, b: c } = require("x")\n',
    )
  })
})

describe('publishing', () => {
  const guard = fileURLToPath(new URL('../../scripts/publish-with-pnpm.mjs', import.meta.url))
  const publishWith = (agent: string) =>
    spawnSync(process.execPath, [guard], {
      env: { ...process.env, npm_config_user_agent: agent },
      encoding: 'utf8',
    })

  it('refuses npm, whose tarballs would keep workspace: ranges', () => {
    const npm = publishWith('npm/11.6.2 node/v20.20.2 linux x64 workspaces/false')
    expect([npm.status, npm.stderr]).toEqual([1, expect.stringMatching(/Publish with pnpm/)])
  })

  it('lets pnpm publish', () => {
    expect(publishWith('pnpm/10.34.8 npm/? node/v20.20.2 linux x64').status).toBe(0)
  })

  it('is the prepublishOnly of every public package', async () => {
    const { workspacePackages } = await import('../../scripts/check-packages/workspace.js')
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const publics = (await workspacePackages(root)).filter((pkg) => pkg.private !== true)
    expect(publics.length).toBeGreaterThan(0)
    for (const pkg of publics) {
      expect(pkg.scripts?.prepublishOnly, pkg.name).toBe('node ../../scripts/publish-with-pnpm.mjs')
    }
  })
})
