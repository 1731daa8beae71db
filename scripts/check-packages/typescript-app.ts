/**
 * A TypeScript app with every README's first example and every entry point, type-checked
 * strictly under the three module resolutions users have: node16, bundler and node10.
 */
import type { App } from './apps.js'
import { run, settleAll } from './process.js'
import { firstExample } from './readme-example.js'
import type { PublicPackage } from './workspace.js'

const RESOLUTIONS = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
  node10: { module: 'esnext', moduleResolution: 'node10' },
} as const

/** Every entry point a manifest's exports map declares, as import specifiers. */
function entryPoints(packages: PublicPackage[]): string[] {
  return packages.flatMap((pkg) =>
    Object.keys(pkg.manifest.exports ?? { '.': {} })
      .filter((subpath) => !subpath.endsWith('.json'))
      .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`)),
  )
}

/**
 * What `wrangler types` declares for a Worker whose `LIMITER` binding is the limiter object: its
 * bindings, which `cloudflare:workers` exports (the @tollgate/cloudflare README imports them).
 */
const WORKER_CONFIGURATION = `declare module 'cloudflare:workers' {
  export const env: { readonly LIMITER: import('@tollgate/cloudflare').LimiterNamespace<unknown> }
}
`

export function typescriptApp(publicPackages: PublicPackage[]): App {
  const packages = publicPackages.map((pkg) => pkg.name)
  // A command's README shows a shell line first (its app runs it); its exports are
  // type-checked through the entry points.
  const libraries = publicPackages.filter((pkg) => pkg.manifest.bin === undefined)
  return {
    name: 'typescript-strict',
    tollgate: packages,
    dependencies: { express: '^5.1.0', koa: '^3.0.0', hono: '^4.6.0', yaml: '^2.0.0' },
    type: 'module',
    files: (tools) => {
      const files: Record<string, string> = {}
      for (const { name } of libraries) {
        files[`src/${name.replace('@tollgate/', '')}.ts`] = firstExample(tools.readme(name), name)
      }
      files['src/worker-configuration.d.ts'] = WORKER_CONFIGURATION
      files['src/entry-points.ts'] = entryPoints(publicPackages)
        .map((specifier, i) => `export * as entry${i} from '${specifier}'\n`)
        .join('')
      for (const [name, options] of Object.entries(RESOLUTIONS)) {
        const compilerOptions = {
          ...options,
          target: 'es2022',
          strict: true,
          noEmit: true,
          esModuleInterop: true,
          skipLibCheck: false,
          noUnusedLocals: false,
          types: ['node'],
        }
        files[`tsconfig.${name}.json`] = JSON.stringify({ compilerOptions, include: ['src'] })
      }
      return files
    },
    exercise: async (dir, tools) => {
      const tsc = `${tools.shared}/node_modules/typescript/bin/tsc`
      const checks = Object.keys(RESOLUTIONS).map(
        (name) => () => run(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir }),
      )
      const results = await settleAll(checks, 3)
      const failed = results.flatMap((result, i) =>
        result.status === 'rejected'
          ? [`${Object.keys(RESOLUTIONS)[i]}: ${result.reason.output ?? result.reason}`]
          : [],
      )
      if (failed.length > 0) throw new Error(failed.join('\n'))
      return `${libraries.length} READMEs' examples and every entry point type-check under ${Object.keys(RESOLUTIONS).join(', ')}`
    },
  }
}

/** An app with every package, loading each entry point with `require` and with `import`. */
export function entryPointsApp(publicPackages: PublicPackage[]): App {
  const specifiers = entryPoints(publicPackages)
  const list = JSON.stringify(specifiers)
  return {
    name: 'every-entry-point',
    tollgate: publicPackages.map((pkg) => pkg.name),
    dependencies: { yaml: '^2.0.0' },
    type: 'module',
    files: () => ({
      'load.cjs': `for (const s of ${list}) console.log(s, Object.keys(require(s)).length)\n`,
      'load.mjs': `for (const s of ${list}) console.log(s, Object.keys(await import(s)).length)\n`,
    }),
    exercise: async (dir) => {
      for (const script of ['load.cjs', 'load.mjs']) {
        const lines = (await run(process.execPath, [script], { cwd: dir })).trim().split('\n')
        const empty = lines.filter((line) => line.endsWith(' 0'))
        if (lines.length !== specifiers.length || empty.length > 0) {
          throw new Error(`${script} loaded:\n${lines.join('\n')}`)
        }
      }
      return `${specifiers.length} entry points load with require and import`
    },
  }
}
