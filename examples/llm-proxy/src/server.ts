import { serve } from '@hono/node-server'
import { createProxy } from './proxy.js'
import { createUpstream } from './upstream.js'

// The fake upstream on UPSTREAM_PORT (3001), the proxy in front of it on PORT (3000).
const { PORT = '3000', UPSTREAM_PORT = '3001' } = process.env
const upstream = `http://localhost:${UPSTREAM_PORT}`
serve({ fetch: createUpstream().fetch, port: Number(UPSTREAM_PORT) })
const proxy = createProxy({ upstream: (path, init) => fetch(`${upstream}${path}`, init) })
serve({ fetch: proxy.fetch, port: Number(PORT) }, () => {
  console.log(`LLM proxy on http://localhost:${PORT}, in front of ${upstream}`)
})
