export { applyCharges } from './apply-charges.js'
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from './memory-store.js'
export type { Charge, Outcome, Store } from './types.js'
