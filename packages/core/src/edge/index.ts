/**
 * `@tollgate/core/edge`: the kit behind `@tollgate/hono/edge`, for Workers and other runtimes
 * where every byte of a bundle is paid at each cold start. It takes the rules and options whose
 * answers need no more than the common path (rate and window rules keyed on identities,
 * matched by method and plan; the default field forms), answers them exactly as the default
 * entries do, and refuses everything else at start-up, naming the rule or option and the field.
 */

export { createEdgeKit, type EdgeFramework, type EdgeKit, type EdgeOptions } from './edge-kit.js'
export type { EdgeAnswer, EdgeResponseOptions } from './edge-responder.js'
