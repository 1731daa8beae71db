/** `pnpm start`: the worker in workerd (through miniflare) on http://127.0.0.1:$PORT (8787). */
import { Miniflare } from 'miniflare'
import { bundleWorker, COMPATIBILITY_DATE, LIMITER_BINDING } from './bundle.js'

const { PORT = '8787' } = process.env
const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(),
  compatibilityDate: COMPATIBILITY_DATE,
  durableObjects: LIMITER_BINDING,
  host: '127.0.0.1',
  port: Number(PORT),
})
const url = await mf.ready
console.log(`Worker on ${url} (try: curl -i ${url})`)

const stop = () => {
  mf.dispose().finally(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
