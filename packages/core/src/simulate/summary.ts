import type { Simulation } from './types.js'

/** How many requests were admitted at times `from` ≤ t < `until`. */
export function admittedBetween(simulation: Simulation, from: number, until: number): number {
  let admitted = 0
  for (const request of simulation.requests) {
    if (request.allowed && request.at >= from && request.at < until) admitted++
  }
  return admitted
}
