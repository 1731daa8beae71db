import type { SimulatedRequest, Simulation } from '@tollgate/core/simulate'
import { seconds, table } from './format.js'
import { niceStep } from './svg.js'

/** One row per moment when the trace has few, else per span of a round length. */
const MOMENTS_SHOWN = 24

/**
 * A lane's timeline as text, in the spec's "timeline as a list" manner:
 * `0.5 s  8 requests  5 allowed, 3 denied  free-token-bucket: 0 left; retry in 100 ms`.
 */
export function timelineLines(label: string, simulation: Simulation): string[] {
  const requests = simulation.requests
  const groups = groupRequests(requests)
  const rows = groups.map(({ from, until, requests: group }) => {
    const allowed = group.filter((r) => r.allowed).length
    const time = from === until ? seconds(from) : `${seconds(from).slice(0, -2)}–${seconds(until)}`
    return [
      time,
      `${group.length} requests`,
      `${allowed} allowed, ${group.length - allowed} denied`,
      stateAfter(group),
    ]
  })
  const allowed = requests.filter((r) => r.allowed).length
  return [
    `${label}`,
    ...table(rows).map((line) => `  ${line}`),
    `  ${requests.length} requests: ${allowed} allowed, ${requests.length - allowed} denied`,
  ]
}

function groupRequests(requests: readonly SimulatedRequest[]) {
  const times = [...new Set(requests.map((r) => r.at))]
  const groups: { from: number; until: number; requests: SimulatedRequest[] }[] = []
  if (times.length <= MOMENTS_SHOWN) {
    for (const request of requests) {
      const last = groups[groups.length - 1]
      if (last?.from === request.at) last.requests.push(request)
      else groups.push({ from: request.at, until: request.at, requests: [request] })
    }
    return groups
  }
  const span = times[times.length - 1]! - times[0]!
  const step = niceStep(span / (MOMENTS_SHOWN / 2))
  for (const request of requests) {
    const from = Math.floor(request.at / step) * step
    const last = groups[groups.length - 1]
    if (last?.from === from) last.requests.push(request)
    else groups.push({ from, until: from + step, requests: [request] })
  }
  return groups
}

/** What each rule left after the group's last request, and the first denial's retry. */
function stateAfter(group: readonly SimulatedRequest[]): string {
  const last = group[group.length - 1]!
  const left = last.decisions.map((d) => `${d.rule}: ${d.remaining} left`)
  const denied = group.find((r) => !r.allowed)
  const deciding = denied?.decisions.find((d) => !d.allowed && d.mode === 'enforce')
  if (denied?.reason === 'missing-identity') left.push('denied: missing identity')
  else if (deciding?.retryAfterMs !== undefined) {
    left.push(`first denied told to retry in ${deciding.retryAfterMs} ms`)
  }
  if (last.decisions.length === 0) left.push('no rule matched')
  return left.join('; ')
}
