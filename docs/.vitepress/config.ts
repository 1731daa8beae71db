import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type DefaultTheme, defineConfig } from 'vitepress'
import { DOCS_URL, REPOSITORY_URL } from './project.js'

// Pages link to files outside docs/ (the root README, package READMEs, examples) with paths
// that work when browsing the repository; on the site those paths would be dead, so they point
// to the same file in the repository instead.
function repositoryLinks(md: import('markdown-it')) {
  md.core.ruler.push('repository-links', (state) => {
    const page = (state.env as { relativePath?: string }).relativePath ?? ''
    for (const token of state.tokens) {
      for (const child of token.children ?? []) {
        const href = child.type === 'link_open' ? child.attrGet('href') : null
        if (href === null || /^[a-z]+:|^#|^\//.test(href)) continue
        const target = join('docs', dirname(page), href).replaceAll('\\', '/')
        if (target.startsWith('docs/')) continue
        const kind = /\.[a-z]+(#.*)?$/.test(target) ? 'blob' : 'tree'
        child.attrSet('href', `${REPOSITORY_URL}/${kind}/main/${target}`)
      }
    }
  })
}

// The API reference is generated from the packages' types (`pnpm docs:api`, run by `docs:build`)
// into docs/api, which is not committed. Its sidebar is read when it is there, so `docs:dev`
// without a generated reference still starts, just without the section.
const API_SIDEBAR = fileURLToPath(new URL('../api/typedoc-sidebar.json', import.meta.url))
const apiSidebar: DefaultTheme.SidebarItem[] = existsSync(API_SIDEBAR)
  ? [
      {
        text: 'API reference',
        link: '/api/',
        collapsed: true,
        items: JSON.parse(readFileSync(API_SIDEBAR, 'utf8')) as DefaultTheme.SidebarItem[],
      },
    ]
  : []

export default defineConfig({
  title: 'Tollgate',
  description: 'Rate limiting for TypeScript HTTP APIs: Express, Koa, Hono, Redis',
  base: new URL(DOCS_URL).pathname,
  cleanUrls: true,
  // A dead link between pages fails the build (VitePress's default): CI builds the site.
  ignoreDeadLinks: false,
  srcExclude: ['**/README.md'],
  markdown: { config: repositoryLinks },
  themeConfig: {
    search: { provider: 'local' },
    socialLinks: [{ icon: 'github', link: REPOSITORY_URL }],
    sidebar: [
      { text: 'Overview', link: '/' },
      {
        text: 'Concepts',
        items: [
          { text: 'Algorithms', link: '/concepts/algorithms' },
          { text: 'Shaping (queues)', link: '/concepts/shaping' },
          { text: 'Keys and proxies', link: '/concepts/keys-and-proxies' },
          { text: 'Headers', link: '/concepts/headers' },
          { text: 'Charging after the response', link: '/concepts/charging-after-the-response' },
          { text: 'Stores', link: '/concepts/stores' },
          { text: 'Redis', link: '/concepts/redis' },
          { text: 'Where to enforce', link: '/concepts/where-to-enforce' },
          { text: 'Failure modes', link: '/concepts/failure-modes' },
          { text: 'Penalties, lists and operators', link: '/concepts/penalties-and-operators' },
          { text: 'Changing rules while running', link: '/concepts/changing-rules-while-running' },
          { text: 'Observability', link: '/concepts/observability' },
          { text: 'Token usage', link: '/concepts/token-usage' },
        ],
      },
      {
        text: 'Adapters',
        items: [
          { text: 'Express', link: '/adapters/express' },
          { text: 'Koa', link: '/adapters/koa' },
          { text: 'Hono', link: '/adapters/hono' },
          { text: 'Cloudflare Durable Objects', link: '/adapters/cloudflare' },
          { text: 'Writing an adapter', link: '/adapters/writing-an-adapter' },
        ],
      },
      {
        text: 'Guides',
        items: [
          { text: 'Which algorithm?', link: '/guides/choosing-an-algorithm' },
          { text: 'Limits per client', link: '/guides/per-client-figures' },
          { text: 'Migrating to Tollgate', link: '/guides/migrating' },
          { text: 'Checking and simulating rules', link: '/guides/cli' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Rules', link: '/reference/rules' },
          { text: 'Options', link: '/reference/options' },
          { text: 'Error codes', link: '/reference/error-codes' },
        ],
      },
      ...apiSidebar,
      { text: 'Client', link: '/client' },
      { text: 'Benchmarks', link: '/benchmarks' },
    ],
  },
})
