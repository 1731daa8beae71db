import type { Sha256Digest } from '../headers/partition-key.js'

/** The part of `node:crypto` used, typed by its shape (core compiles without Node's types). */
type NodeCrypto = {
  createHash(algorithm: 'sha256'): {
    update(text: string, encoding: 'utf8'): { digest(): Uint8Array }
  }
  /** One-shot hashing, Node ≥ 20.12: no hash object; strings are hashed as UTF-8. */
  hash?(algorithm: 'sha256', text: string, encoding: 'base64'): string
}

type BuiltinModules = { getBuiltinModule?: (id: string) => unknown }

/**
 * Node's own SHA-256 (`createHash`), about a tenth of the CPU of Web Crypto's digest on a short
 * key, with `base64` through the one-shot `crypto.hash` where Node has it (20.12 and later),
 * a sixth of that again; synchronous, so a partition key that misses the cache is written with the response
 * instead of after a trip through the event loop. Reached through `process.getBuiltinModule`
 * (Node ≥ 20.16, Bun, Deno), so importing this module loads nothing on other runtimes;
 * undefined where there is no such module, and the adapters then use Web Crypto.
 */
export const nodeSha256: Sha256Digest | undefined = (() => {
  const process = (globalThis as { process?: BuiltinModules }).process
  const crypto = process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined
  if (typeof crypto?.createHash !== 'function') return undefined
  const digest = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest()
  const hash = crypto.hash
  // `crypto.hash` straight to base64 is about a sixth of `createHash` and its buffer.
  const base64 =
    typeof hash === 'function' ? (text: string) => hash('sha256', text, 'base64') : undefined
  return Object.assign(digest, { base64 })
})()
