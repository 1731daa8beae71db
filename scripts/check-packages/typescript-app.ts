/**
 * A TypeScript app with every README's first example and every rules-file entry, type-checked
 * strictly under the three module resolutions users have: node16, bundler and node10.
 */
import type { App } from './apps.js'
import { run, settleAll } from './process.js'
import { firstExample } from './readme-example.js'

const RESOLUTIONS = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
  node10: { module: 'esnext', moduleResolution: 'node10' },
} as const

export function typescriptApp(packages: string[]): App {
  const withRulesFile = ['@tollgate/core', '@tollgate/express', '@tollgate/koa', '@tollgate/hono']
  return {
    name: 'typescript-strict',
    tollgate: packages,
    dependencies: { express: '^5.1.0', koa: '^3.0.0', hono: '^4.6.0', yaml: '^2.0.0' },
    type: 'module',
    files: (tools) => {
      const files: Record<string, string> = {}
      for (const name of packages) {
        files[`src/${name.replace('@tollgate/', '')}.ts`] = firstExample(tools.readme(name), name)
      }
      files['src/rules-files.ts'] = withRulesFile
        .filter((name) => packages.includes(name))
        .map((name, i) => `export { loadRulesText as load${i} } from '${name}/rules-file'\n`)
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
      return `${packages.length} READMEs' examples type-check under ${Object.keys(RESOLUTIONS).join(', ')}`
    },
  }
}
