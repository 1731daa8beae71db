// The published shape: every public package loads from its build with `require` and `import`,
// without the source condition, and ships type declarations for both. Whether those types
// resolve under node10, node16 and bundler is Are the Types Wrong?'s check of each packed
// tarball, in `pnpm check:packages` (scripts/check-packages/lint-tarball.ts), which CI runs
// after `pnpm test` on every public package.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

const packages: Array<[name: string, exports: string[]]> = [
  ['@tollgate/core', ['createLimiter', 'memoryStore', 'tokenBucket', 'RateLimitError']],
  ['@tollgate/redis', ['redisStore']],
  ['@tollgate/express', ['rateLimit', 'createLimiter']],
  ['@tollgate/koa', ['rateLimit', 'createLimiter']],
  ['@tollgate/hono', ['rateLimit', 'createLimiter']],
  ['@tollgate/client', ['createClient', 'localLimiter', 'kyHooks']],
]

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`))
}

/** Runs a script in a plain Node process (no source condition) from this folder. */
function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: here, encoding: 'utf8' })
}

describe.each(packages)('%s, as published', (name, names) => {
  const dir = packageDir(name)
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const built = existsSync(join(dir, 'dist'))

  it('has been built (pnpm test builds before testing)', () => {
    expect(built, `${name} has no dist/: run pnpm build`).toBe(true)
  })

  it.runIf(built)('loads with require and exposes its API', () => {
    const out = node(['-e', `console.log(Object.keys(require(${JSON.stringify(name)})).join())`])
    for (const exported of names) expect(out.trim().split(',')).toContain(exported)
  })

  it.runIf(built)('loads with import and exposes its API', () => {
    const script = `import(${JSON.stringify(name)}).then((m) => console.log(Object.keys(m).join()))`
    const out = node(['--input-type=module', '-e', script])
    for (const exported of names) expect(out.trim().split(',')).toContain(exported)
  })

  it.runIf(built && manifest.exports['./rules-file'] !== undefined)(
    'loads its rules-file entry point with require and import',
    () => {
      const entry = JSON.stringify(`${name}/rules-file`)
      const required = node(['-e', `console.log(typeof require(${entry}).loadRulesText)`])
      const script = `import(${entry}).then((m) => console.log(typeof m.loadRulesText))`
      const imported = node(['--input-type=module', '-e', script])
      expect([required.trim(), imported.trim()]).toEqual(['function', 'function'])
    },
  )

  it.runIf(built && manifest.exports['./fields'] !== undefined)(
    'loads its fields entry point with require and import',
    () => {
      const entry = JSON.stringify(`${name}/fields`)
      const required = node(['-e', `console.log(typeof require(${entry}).readRateLimitFields)`])
      const script = `import(${entry}).then((m) => console.log(typeof m.readRateLimitFields))`
      const imported = node(['--input-type=module', '-e', script])
      expect([required.trim(), imported.trim()]).toEqual(['function', 'function'])
    },
  )

  it.runIf(built && manifest.exports['./simulate'] !== undefined)(
    'loads its simulate entry point with require and import',
    () => {
      const entry = JSON.stringify(`${name}/simulate`)
      const required = node(['-e', `console.log(typeof require(${entry}).simulate)`])
      const script = `import(${entry}).then((m) => console.log(typeof m.simulate))`
      const imported = node(['--input-type=module', '-e', script])
      expect([required.trim(), imported.trim()]).toEqual(['function', 'function'])
    },
  )

  it.runIf(built && manifest.exports['./usage'] !== undefined)(
    'loads its usage entry point with require and import',
    () => {
      const entry = JSON.stringify(`${name}/usage`)
      const required = node(['-e', `console.log(typeof require(${entry}).sseUsage)`])
      const script = `import(${entry}).then((m) => console.log(typeof m.sseUsage))`
      const imported = node(['--input-type=module', '-e', script])
      expect([required.trim(), imported.trim()]).toEqual(['function', 'function'])
    },
  )

  it('packs, with its workspace dependencies resolved and no test files, for Node 20+', () => {
    // No scripts: packing must not rebuild dist/ while other tests read it.
    const out = execFileSync(
      'pnpm',
      ['pack', '--dry-run', '--json', '--config.ignore-scripts=true'],
      { cwd: realpathSync(dir), encoding: 'utf8' },
    )
    const files: string[] = JSON.parse(out).files.map((file: { path: string }) => file.path)
    expect(files).toContain('dist/index.cjs')
    expect(files.filter((file) => /\.test\.ts$|\/test-[^/]*$|\.fixture\.ts$/.test(file))).toEqual(
      [],
    )
    expect(manifest.engines?.node).toBe('>=20')
  })

  it.runIf(built)('ships types for both module systems', () => {
    const root = manifest.exports['.']
    for (const target of [root.import.types, root.require.types, root.require.default]) {
      expect(existsSync(join(dir, target)), `${name}: ${target}`).toBe(true)
    }
  })
})

describe.each([
  ['@tollgate/core/store', 'applyCharges'],
  ['@tollgate/core/adapter', 'createAdapterKit'],
  ['@tollgate/core/node', 'endWhenFinished'],
])('%s, as published', (entry, exported) => {
  const dir = packageDir(entry.split('/').slice(0, 2).join('/'))
  const built = existsSync(join(dir, 'dist'))

  it.runIf(built)('loads with require and import, with types for both', () => {
    const name = JSON.stringify(entry)
    const required = node(['-e', `console.log(typeof require(${name}).${exported})`])
    const script = `import(${name}).then((m) => console.log(typeof m.${exported}))`
    const imported = node(['--input-type=module', '-e', script])
    expect([required.trim(), imported.trim()]).toEqual(['function', 'function'])
    const target = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports[
      `./${entry.split('/').pop()}`
    ]
    for (const types of [target.import.types, target.require.types]) {
      expect(existsSync(join(dir, types)), types).toBe(true)
    }
  })
})

describe('@tollgate/core, by audience', () => {
  const built = existsSync(join(packageDir('@tollgate/core'), 'dist'))
  const STORE_AUTHORS = ['applyCharges', 'step', 'checkCost', 'checkTime', 'wholeMs', 'MAX_TIME_MS']
  const ADAPTER_AUTHORS = ['createAdapterKit', 'UNKNOWN_CLIENT_KEY']

  it.runIf(built)("keeps store and adapter authors' values out of the apps' entry", () => {
    const script = `import('@tollgate/core').then((m) => console.log(Object.keys(m).join()))`
    const main = node(['--input-type=module', '-e', script]).trim().split(',')
    for (const name of [...STORE_AUTHORS, ...ADAPTER_AUTHORS]) expect(main).not.toContain(name)
    expect(main).toEqual(expect.arrayContaining(['createLimiter', 'defineRules', 'memoryStore']))
  })

  it.runIf(built)('shares one error class between the entries, with require and import', () => {
    const same = `a.RateLimitError === b.RateLimitError && a.isRateLimitError === b.isRateLimitError`
    const required = node([
      '-e',
      `const a = require('@tollgate/core'), b = require('@tollgate/core/store'); console.log(${same})`,
    ])
    const script = `Promise.all([import('@tollgate/core'), import('@tollgate/core/store')]).then(([a, b]) => console.log(${same}))`
    const imported = node(['--input-type=module', '-e', script])
    expect([required.trim(), imported.trim()]).toEqual(['true', 'true'])
  })
})
