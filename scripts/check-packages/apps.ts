/**
 * The fresh apps a registry user would make: each installs Tollgate from the packed tarballs
 * with npm, pastes a README's first example and serves it; the checker then sends it requests.
 * Tools every app shares (TypeScript, esbuild, type packages, clients) come from one prefix
 * installed once, found by Node and TypeScript in the apps' parent folder.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { CLI_APP } from './cli-app.js'
import { expectRateLimited, freshLoopbackAddress, get } from './http-checks.js'
import { run, startServer } from './process.js'
import { firstExample, toCommonJs } from './readme-example.js'

export const SHARED_TOOLS: Record<string, string> = {
  typescript: '^5.9.0',
  esbuild: '^0.27.0',
  '@types/node': '^20.19.0',
  '@types/express': '^5.0.0',
  '@types/koa': '^3.0.0',
  '@hono/node-server': '^2.0.0',
  ioredis: '^5.8.0',
}

export type AppTools = {
  /** The folder whose node_modules holds SHARED_TOOLS. */
  shared: string
  /** Reads the packed README of a public package. */
  readme: (name: string) => string
}

export type App = {
  name: string
  /**
   * Tollgate packages to install from tarballs (their workspace dependencies come along); the
   * first is the one whose README example the app runs.
   */
  tollgate: string[]
  /** Registry packages installed into the app itself. */
  dependencies: Record<string, string>
  type: 'module' | 'commonjs'
  files: (tools: AppTools) => Record<string, string>
  /** Runs the app and checks it; resolves with a line for the report. */
  exercise: (dir: string, tools: AppTools) => Promise<string>
}

const LISTEN = `
const server = app.listen(0, '127.0.0.1', () => console.log('LISTENING ' + server.address().port))
`
// The example's client has no offline queue: serve once it is connected, so the first request
// is decided by Redis rather than by the rule's onStoreError.
const LISTEN_WHEN_REDIS_READY = `
const listen = () => {
  const server = app.listen(0, '127.0.0.1', () => console.log('LISTENING ' + server.address().port))
}
if (redis.status === 'ready') listen()
else redis.once('ready', listen)
`
const SERVE_HONO = `
import { serve } from '@hono/node-server'
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => console.log('LISTENING ' + info.port))
`
const example = (tools: AppTools, name: string) => firstExample(tools.readme(name), name)

async function serveAndLimit(dir: string, env: NodeJS.ProcessEnv = {}, from = '127.0.0.1') {
  const { child, port } = await startServer(['app.js'], { cwd: dir, env })
  try {
    return await expectRateLimited(() => get(port, from))
  } finally {
    child.kill()
  }
}

/**
 * The express-rate-limit facade answers as express-rate-limit does: its draft-8 fields on every
 * response, then a 429 with `Retry-After` and its plain-text message, not a problem document.
 */
async function serveAndLimitAsExpressRateLimit(dir: string) {
  const { child, port } = await startServer(['app.js'], { cwd: dir })
  try {
    for (let sent = 1; sent <= 100; sent++) {
      const answer = await get(port, '127.0.0.1')
      if (answer.header('ratelimit-policy') === undefined) {
        throw new Error(`request ${sent} has no RateLimit-Policy`)
      }
      if (answer.status !== 429) continue
      const retryAfter = Number(answer.header('retry-after'))
      if (!(retryAfter >= 1)) throw new Error(`429 without a Retry-After`)
      if (!answer.body.startsWith('Too many requests')) throw new Error(`429 with ${answer.body}`)
      return `denied request ${sent} with 429, Retry-After ${retryAfter}, express-rate-limit's message`
    }
    throw new Error('100 requests and none denied')
  } finally {
    child.kill()
  }
}

/** YAML rules in the file shape, through an adapter's rules-file entry, loaded with require. */
const RULES_FILE_CJS = `
const { loadRulesText } = require('@tollgate/koa/rules-file')
const rules = loadRulesText('- id: per-ip\\n  match: { identity: ip }\\n  algorithm: token_bucket\\n  rate_per_s: 1\\n  burst: 2\\n', 'yaml')
console.log(rules.map((rule) => rule.id).join())
`

export const APPS: App[] = [
  {
    name: 'express-4-commonjs',
    tollgate: ['@tollgate/express'],
    dependencies: { express: '^4.21.0' },
    type: 'commonjs',
    files: (tools) => ({ 'app.js': toCommonJs(example(tools, '@tollgate/express')) + LISTEN }),
    exercise: (dir) => serveAndLimit(dir),
  },
  {
    name: 'express-5-esm-without-yaml',
    tollgate: ['@tollgate/express'],
    dependencies: { express: '^5.1.0' },
    type: 'module',
    files: (tools) => ({
      'app.js': example(tools, '@tollgate/express') + LISTEN,
      'rules-file.js': "await import('@tollgate/express/rules-file')\n",
    }),
    exercise: async (dir) => {
      if (existsSync(join(dir, 'node_modules', 'yaml'))) {
        throw new Error('yaml was installed for an app that loads no rule file')
      }
      const missing = await run(process.execPath, ['rules-file.js'], { cwd: dir }).then(
        () => 'loaded',
        (error: { output?: string }) => error.output ?? '',
      )
      if (!/Cannot find (package|module) 'yaml'/.test(missing)) {
        throw new Error(
          `the rules-file entry without yaml does not say yaml is missing:\n${missing}`,
        )
      }
      return `${await serveAndLimit(dir)}; no yaml installed, rules-file names it missing`
    },
  },
  {
    name: 'express-rate-limit-facade',
    tollgate: ['@tollgate/express-rate-limit'],
    dependencies: { express: '^5.1.0' },
    type: 'module',
    files: (tools) => ({ 'app.js': example(tools, '@tollgate/express-rate-limit') + LISTEN }),
    exercise: (dir) => serveAndLimitAsExpressRateLimit(dir),
  },
  {
    name: 'koa-2-with-rules-file',
    tollgate: ['@tollgate/koa'],
    dependencies: { koa: '^2.16.0', yaml: '^2.0.0' },
    type: 'module',
    files: (tools) => ({
      'app.js': example(tools, '@tollgate/koa') + LISTEN,
      'rules.cjs': RULES_FILE_CJS,
    }),
    exercise: async (dir) => {
      const ids = (await run(process.execPath, ['rules.cjs'], { cwd: dir })).trim()
      if (ids !== 'per-ip') throw new Error(`the YAML rules loaded as ${ids}`)
      return `${await serveAndLimit(dir)}; YAML rules loaded with require`
    },
  },
  {
    name: 'hono-node',
    tollgate: ['@tollgate/hono'],
    dependencies: { hono: '^4.6.0' },
    type: 'module',
    files: (tools) => ({ 'app.js': example(tools, '@tollgate/hono') + SERVE_HONO }),
    exercise: (dir) => serveAndLimit(dir),
  },
  {
    name: 'hono-worker',
    tollgate: ['@tollgate/hono'],
    dependencies: { hono: '^4.6.0' },
    type: 'module',
    files: (tools) => ({
      'worker.js': `${example(tools, '@tollgate/hono')}\nexport default app\n`,
    }),
    exercise: async (dir, tools) => {
      const script = await bundleWorker(join(dir, 'worker.js'), tools)
      const mf = new Miniflare({ modules: true, script, compatibilityDate: '2025-12-01' })
      try {
        const send = async () => {
          const headers = { 'CF-Connecting-IP': '203.0.113.9' }
          const res = await mf.dispatchFetch('http://worker.test/', { headers })
          const body = await res.text()
          return {
            status: res.status,
            header: (n: string) => res.headers.get(n) ?? undefined,
            body,
          }
        }
        return `bundled for Workers (${script.length} bytes), in workerd: ${await expectRateLimited(send)}`
      } finally {
        await mf.dispose()
      }
    },
  },
  {
    name: 'durable-object-worker',
    tollgate: ['@tollgate/cloudflare', '@tollgate/hono'],
    dependencies: { hono: '^4.6.0' },
    type: 'module',
    files: (tools) => ({ 'worker.js': example(tools, '@tollgate/cloudflare') }),
    exercise: async (dir, tools) => {
      const script = await bundleWorker(join(dir, 'worker.js'), tools)
      const mf = new Miniflare({
        modules: true,
        script,
        compatibilityDate: '2025-12-01',
        durableObjects: { LIMITER: { className: 'TollgateLimiter', useSQLite: true } },
      })
      try {
        const send = async () => {
          const headers = { 'CF-Connecting-IP': '203.0.113.9' }
          const res = await mf.dispatchFetch('http://worker.test/', { headers })
          const body = await res.text()
          return {
            status: res.status,
            header: (n: string) => res.headers.get(n) ?? undefined,
            body,
          }
        }
        return `bundled for Workers (${script.length} bytes), its object in workerd: ${await expectRateLimited(send)}`
      } finally {
        await mf.dispose()
      }
    },
  },
  {
    name: 'core-alone',
    tollgate: ['@tollgate/core'],
    dependencies: {},
    type: 'module',
    files: (tools) => ({ 'example.js': example(tools, '@tollgate/core') }),
    exercise: async (dir) => {
      const out = (await run(process.execPath, ['example.js'], { cwd: dir })).trim()
      if (!/^\d+ of \d+ left$/.test(out)) throw new Error(`the example printed ${out}`)
      return `printed "${out}"`
    },
  },
  {
    name: 'redis-with-express',
    tollgate: ['@tollgate/redis', '@tollgate/express'],
    dependencies: { express: '^5.1.0' },
    type: 'module',
    files: (tools) => ({ 'app.js': example(tools, '@tollgate/redis') + LISTEN_WHEN_REDIS_READY }),
    exercise: (dir) => {
      const { REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
      const env = { REDIS_URL }
      // A client address of its own, so the shared Redis holds no count from another run.
      return serveAndLimit(dir, env, freshLoopbackAddress())
    },
  },
]

// The client's example calls a vendor's URL: the app answers it from a local server instead, as
// a rate-limited server would (its fields say 9 of 10 left), and prints what the call returned.
const LOCAL_ORIGIN = `
import { createServer } from 'node:http'
let requests = 0
const server = createServer((req, res) => {
  requests++
  res.writeHead(200, { 'RateLimit-Policy': '"p";q=10;w=1', RateLimit: '"p";r=9;t=1' }).end('ok')
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const local = 'http://127.0.0.1:' + server.address().port
const realFetch = globalThis.fetch
globalThis.fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input)
  const to = url.replace('https://api.example.com', local)
  return input instanceof Request ? realFetch(new Request(to, input)) : realFetch(to, init)
}
`
const REPORT_CLIENT = `
console.log('STATUS ' + res.status + ' REQUESTS ' + requests)
process.exit(0)
`

const CLIENT_APP: App = {
  name: 'client-fetch',
  tollgate: ['@tollgate/client'],
  dependencies: {},
  type: 'module',
  files: (tools) => ({
    'example.js': LOCAL_ORIGIN + example(tools, '@tollgate/client') + REPORT_CLIENT,
  }),
  exercise: async (dir) => {
    const out = (await run(process.execPath, ['example.js'], { cwd: dir })).trim()
    if (out !== 'STATUS 200 REQUESTS 1') throw new Error(`the example printed ${out}`)
    return 'fetched through the client from a local origin: 200, one request'
  },
}

APPS.push(CLIENT_APP, CLI_APP)

// The metrics package's example decides one request through an observed limiter, with no SDK
// registered: OpenTelemetry's no-op meter records, and the verdict is the limiter's own.
APPS.push({
  name: 'opentelemetry-no-sdk',
  tollgate: ['@tollgate/opentelemetry', '@tollgate/core'],
  dependencies: { '@opentelemetry/api': '^1.7.0' },
  type: 'module',
  files: (tools) => ({ 'example.js': example(tools, '@tollgate/opentelemetry') }),
  exercise: async (dir) => {
    const out = await run(process.execPath, ['example.js'], { cwd: dir })
    if (!/allowed: true/.test(out)) throw new Error(`the example printed ${out.trim()}`)
    return 'decided one request through an observed limiter: allowed'
  },
})

async function bundleWorker(entry: string, tools: AppTools): Promise<string> {
  // The app's esbuild, from the registry; typed here as far as it is used.
  const esbuild: {
    build(options: object): Promise<{ outputFiles: Array<{ text: string }> }>
  } = createRequire(join(tools.shared, 'package.json'))('esbuild')
  // As wrangler bundles: no Node built-ins, the Workers conditions, minified.
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    // What the runtime provides (a Worker's bindings at module scope).
    external: ['cloudflare:workers'],
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}
