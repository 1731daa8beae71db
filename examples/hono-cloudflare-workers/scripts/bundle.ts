import { bundleWorker as bundle } from '@tollgate/test-utils'

export { COMPATIBILITY_DATE } from '@tollgate/test-utils'

/** Bundles src/worker.ts into one ES module, as wrangler would, with no Node built-ins. */
export function bundleWorker(): Promise<string> {
  return bundle(new URL('../src/worker.ts', import.meta.url))
}
