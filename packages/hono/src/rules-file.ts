/**
 * Rules from YAML or JSON text, in the spec's file shape (`rate_per_s`, `window_s`,
 * `cost_by_route`…). A separate entry point, so apps that define rules in code never bundle the
 * YAML parser. It re-exports `@tollgate/core/rules-file` (documented there).
 * @example
 * import { readFileSync } from 'node:fs'
 * import { loadRulesText } from '@tollgate/hono/rules-file'
 * app.use(rateLimit(loadRulesText(readFileSync('rules.yaml', 'utf8'), 'yaml')))
 * @module @tollgate/hono/rules-file
 */
export * from '@tollgate/core/rules-file'
