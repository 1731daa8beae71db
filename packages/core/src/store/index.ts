export { applyCharges } from './apply-charges.js'
export type { Charge, Outcome, Store } from './types.js'
