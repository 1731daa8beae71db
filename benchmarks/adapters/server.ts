/**
 * One app on a real socket, in its own process, for the autocannon sanity check: it reports its
 * port, and its own CPU time whenever the parent asks, so the figure excludes the load generator.
 * Usage (forked by sockets.ts): server.ts <framework> <variant>
 */
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { VariantName } from './config.js'
import { expressApp } from './targets/express.js'
import { honoApp } from './targets/hono.js'
import { koaApp } from './targets/koa.js'

const [framework, variant] = process.argv.slice(2) as [string, VariantName]

function listen(): Promise<AddressInfo> {
  if (framework.startsWith('Hono')) {
    return new Promise((resolve) => {
      const app = honoApp(variant)
      // The targets read the client's address from the bindings, as app.request() passes it.
      type NodeBindings = { incoming: { socket: { remoteAddress?: string } } }
      const fetch = (request: Request, env: NodeBindings) =>
        app.fetch(request, { ...env, address: env.incoming.socket.remoteAddress ?? '' })
      serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info as AddressInfo))
    })
  }
  const listener = (
    framework.startsWith('Express') ? expressApp(variant) : koaApp(variant)
  ) as RequestListener
  const server = createServer(listener)
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server.address() as AddressInfo))
  })
}

const { port } = await listen()
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage()
    process.send?.({ cpu: user + system })
  } else if (message === 'exit') {
    process.exit(0)
  }
})
process.send?.({ port })
