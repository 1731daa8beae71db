/**
 * The command as a registry user runs it: `@tollgate/cli` installed from its tarball with npm,
 * then `tollgate check` through npx on a rules file that holds and on one with a misspelt field.
 */
import type { App } from './apps.js'
import { CommandError, run } from './process.js'

const RULES = `- id: per-ip
  match: { identity: ip }
  algorithm: token_bucket
  rate_per_s: 10
  burst: 20
`
const MISSPELT = RULES.replace('burst: 20', 'brust: 20')

export const CLI_APP: App = {
  name: 'cli-check',
  tollgate: ['@tollgate/cli'],
  dependencies: {},
  type: 'module',
  files: () => ({ 'rules.yaml': RULES, 'misspelt.yaml': MISSPELT }),
  exercise: async (dir) => {
    const check = (file: string) =>
      run('npx', ['--no-install', 'tollgate', 'check', file], { cwd: dir })
    const table = await check('rules.yaml')
    if (!table.includes('per-ip')) throw new Error(`tollgate check printed:\n${table}`)
    const refused = await check('misspelt.yaml').then(
      () => undefined,
      (error: unknown) => error,
    )
    if (!(refused instanceof CommandError) || !refused.message.endsWith('exit code 1')) {
      throw new Error(`tollgate check accepted a misspelt field, or failed otherwise: ${refused}`)
    }
    if (!/per-ip/.test(refused.output) || !/brust/.test(refused.output)) {
      throw new Error(`the refusal names neither the rule nor the field:\n${refused.output}`)
    }
    return 'tollgate check printed the rules table, and refused a misspelt field with exit 1'
  },
}
