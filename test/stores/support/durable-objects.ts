/**
 * The limiter object running in workerd (miniflare), and its namespace binding handed to Node:
 * a `durableObjectStore` made here sends each decision to a real Durable Object.
 */
import {
  type DurableObjectStoreOptions,
  durableObjectStore,
  type LimiterNamespace,
} from '@tollgate/cloudflare'
import type { Store } from '@tollgate/core/store'
import { bundleWorker, COMPATIBILITY_DATE } from '@tollgate/test-utils'
import { Miniflare } from 'miniflare'

export type LimiterObjects = {
  /** A store on the namespace; `prefix` defaults to one no other store of this run uses. */
  store(options?: DurableObjectStoreOptions): Store
  dispose(): Promise<void>
}

let stores = 0

/** `persist`: a directory the objects' storage lives in, kept after `dispose` (else memory). */
export async function startLimiterObjects({
  persist,
}: {
  persist?: string
} = {}): Promise<LimiterObjects> {
  const script = await bundleWorker(new URL('./limiter-object-worker.ts', import.meta.url))
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { LIMITER: { className: 'TollgateLimiter', useSQLite: true } },
    ...(persist === undefined ? {} : { durableObjectsPersist: persist }),
  })
  await mf.ready
  const namespace = (await mf.getDurableObjectNamespace(
    'LIMITER',
  )) as unknown as LimiterNamespace<unknown>
  return {
    store: (options = {}) =>
      durableObjectStore(namespace, { time: 'caller', prefix: `store-${++stores}:`, ...options }),
    dispose: () => mf.dispose(),
  }
}
