/**
 * Draws simulated lanes as one SVG document, as a string: no DOM, so the CLI writes it to a
 * file and the playground puts it in its page, and both show the same picture. Per lane, the
 * arrivals (allowed above the axis, denied below, per time bin) and each rule's remaining
 * allowance over time, as a step line.
 * @module @tollgate/cli/svg
 */
import type { Simulation, StateSample } from '@tollgate/core/simulate'

/** One lane of the chart: a simulation, and the label drawn above it. */
export type ChartLane = { readonly label: string; readonly simulation: Simulation }

/** The span of time drawn (ms, as the simulation's clock), and the chart's size. */
export type ChartOptions = {
  readonly from: number
  readonly until: number
  /** @default 880 */
  readonly width?: number
  /** Lines drawn per lane at most (one per rule and key). @default 4 */
  readonly maxSeries?: number
}

const LANE_HEIGHT = 150
const LEFT = 56
const RIGHT = 16
const TOP = 8
const BIN_PX = 4
const COLORS = { allowed: '#2e7d32', denied: '#c62828', axis: '#555', grid: '#ddd' }
const SERIES = ['#1565c0', '#6a1b9a', '#ef6c00', '#00838f']

/**
 * Draws the lanes one above the other, as one SVG document (a string): what `tollgate simulate
 * --svg` writes and the playground shows.
 * @example
 * const svg = timelineSvg([{ label: 'token bucket', simulation }], { from: 0, until: 10_000 })
 */
export function timelineSvg(lanes: readonly ChartLane[], options: ChartOptions): string {
  const width = options.width ?? 880
  const height = TOP + lanes.length * LANE_HEIGHT + 28
  const span = Math.max(1, options.until - options.from)
  const plot = width - LEFT - RIGHT
  const x = (at: number) => LEFT + ((at - options.from) / span) * plot
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
  ]
  lanes.forEach((lane, index) => {
    parts.push(laneSvg(lane, TOP + index * LANE_HEIGHT, x, plot, options))
  })
  parts.push(axisSvg(options.from, options.until, x, TOP + lanes.length * LANE_HEIGHT))
  parts.push('</svg>')
  return parts.join('\n')
}

function laneSvg(
  lane: ChartLane,
  top: number,
  x: (at: number) => number,
  plot: number,
  options: ChartOptions,
): string {
  const { simulation } = lane
  const allowed = simulation.requests.filter((r) => r.allowed).length
  const total = simulation.requests.length
  const parts = [
    `<g class="lane">`,
    `<text x="${LEFT}" y="${top + 12}" font-weight="600">${escapeXml(lane.label)}</text>`,
    `<text x="${LEFT + plot}" y="${top + 12}" text-anchor="end">${allowed} of ${total} allowed</text>`,
  ]
  // Arrivals: a histogram per bin, allowed up from the middle line, denied down.
  const middle = top + 52
  const bins = new Map<number, { allowed: number; denied: number }>()
  for (const request of simulation.requests) {
    if (request.at < options.from || request.at > options.until) continue
    const bin = Math.floor((x(request.at) - LEFT) / BIN_PX)
    const counts = bins.get(bin) ?? { allowed: 0, denied: 0 }
    if (request.allowed) counts.allowed++
    else counts.denied++
    bins.set(bin, counts)
  }
  const most = Math.max(1, ...[...bins.values()].map((c) => Math.max(c.allowed, c.denied)))
  const barScale = (count: number) => Math.max(1, (count / most) * 30)
  for (const [bin, counts] of bins) {
    const left = (LEFT + bin * BIN_PX).toFixed(1)
    if (counts.allowed > 0) {
      const h = barScale(counts.allowed)
      parts.push(
        `<rect x="${left}" y="${(middle - h).toFixed(1)}" width="${BIN_PX - 1}" height="${h.toFixed(1)}" fill="${COLORS.allowed}"><title>${counts.allowed} allowed</title></rect>`,
      )
    }
    if (counts.denied > 0) {
      const h = barScale(counts.denied)
      parts.push(
        `<rect x="${left}" y="${middle}" width="${BIN_PX - 1}" height="${h.toFixed(1)}" fill="${COLORS.denied}"><title>${counts.denied} denied</title></rect>`,
      )
    }
  }
  parts.push(
    `<line x1="${LEFT}" x2="${LEFT + plot}" y1="${middle}" y2="${middle}" stroke="${COLORS.grid}"/>`,
  )
  parts.push(
    `<text x="${LEFT - 6}" y="${middle - 4}" text-anchor="end" fill="${COLORS.allowed}">allowed</text>`,
  )
  parts.push(
    `<text x="${LEFT - 6}" y="${middle + 12}" text-anchor="end" fill="${COLORS.denied}">denied</text>`,
  )
  // State: remaining over time, per rule and key.
  const stateTop = top + 92
  const stateHeight = 48
  const series = groupSeries(simulation.states).slice(0, options.maxSeries ?? 4)
  const limit = Math.max(1, ...series.map((s) => s.samples[0]!.limit))
  const y = (remaining: number) => stateTop + stateHeight - (remaining / limit) * stateHeight
  parts.push(
    `<line x1="${LEFT}" x2="${LEFT + plot}" y1="${y(0)}" y2="${y(0)}" stroke="${COLORS.grid}"/>`,
  )
  parts.push(`<text x="${LEFT - 6}" y="${y(limit) + 8}" text-anchor="end">${limit}</text>`)
  parts.push(`<text x="${LEFT - 6}" y="${y(0)}" text-anchor="end">0</text>`)
  series.forEach((line, i) => {
    const points: string[] = []
    let previous: number | undefined
    for (const sample of line.samples) {
      if (sample.at < options.from || sample.at > options.until) continue
      const px = x(sample.at).toFixed(1)
      if (previous !== undefined) points.push(`${px},${y(previous).toFixed(1)}`)
      points.push(`${px},${y(sample.remaining).toFixed(1)}`)
      previous = sample.remaining
    }
    const color = SERIES[i % SERIES.length]
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${points.join(' ')}"><title>${escapeXml(`${line.rule} ${line.key}: remaining`)}</title></polyline>`,
    )
  })
  const legend = series.map((s) => `${s.rule} ${s.key}`).join(', ')
  parts.push(
    `<text x="${LEFT}" y="${stateTop - 4}" fill="${COLORS.axis}">remaining: ${escapeXml(legend)}</text>`,
  )
  parts.push('</g>')
  return parts.join('\n')
}

function groupSeries(states: readonly StateSample[]) {
  const byId = new Map<string, { rule: string; key: string; samples: StateSample[] }>()
  for (const sample of states) {
    const id = `${sample.rule}\u0000${sample.key}`
    let series = byId.get(id)
    if (series === undefined) {
      series = { rule: sample.rule, key: sample.key, samples: [] }
      byId.set(id, series)
    }
    series.samples.push(sample)
  }
  return [...byId.values()]
}

function axisSvg(from: number, until: number, x: (at: number) => number, top: number): string {
  const step = niceStep((until - from) / 8)
  const parts = [
    `<line x1="${x(from)}" x2="${x(until)}" y1="${top}" y2="${top}" stroke="${COLORS.axis}"/>`,
  ]
  for (let at = Math.ceil(from / step) * step; at <= until; at += step) {
    parts.push(
      `<line x1="${x(at)}" x2="${x(at)}" y1="${top}" y2="${top + 4}" stroke="${COLORS.axis}"/>`,
    )
    parts.push(
      `<text x="${x(at)}" y="${top + 16}" text-anchor="middle">${Number((at / 1000).toFixed(3))} s</text>`,
    )
  }
  return parts.join('\n')
}

/** The time drawn at `px` from the left of a chart of `width`, in whole ms (for clicks on it). */
export function chartTimeAt(px: number, options: ChartOptions): number {
  const plot = (options.width ?? 880) - LEFT - RIGHT
  const share = Math.min(1, Math.max(0, (px - LEFT) / plot))
  return Math.round(options.from + share * (options.until - options.from))
}

/** 1, 2 or 5 × a power of ten, at least `rough`. */
export function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)))
  for (const factor of [1, 2, 5, 10]) if (factor * power >= rough) return factor * power
  return 10 * power
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!,
  )
}
