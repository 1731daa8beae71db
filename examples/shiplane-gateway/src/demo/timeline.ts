import type { Exchange } from './client.js'
import type { SimRequest } from './scenarios.js'

/** `12:00:00.500` (UTC), the simulated time. */
export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23)
}

export function describeRequest(request: SimRequest): string {
  const who = request.apiKey !== undefined ? `key ${request.apiKey}` : `from ${request.clientIp}`
  const spoof =
    request.spoofed === undefined ? '' : `, spoofing X-Forwarded-For: ${request.spoofed}`
  return `${request.method} ${request.path}  ${who}${spoof}`
}

/** Runs of this many or more alike rows are shown as first, count, last. */
const COLLAPSE_FROM = 5

/** Table rows for one moment's exchanges, runs of the same status collapsed. */
export function timelineRows(exchanges: readonly Exchange[], showGateway: boolean): string[][] {
  const rows: string[][] = []
  let start = 0
  while (start < exchanges.length) {
    let end = start + 1
    while (end < exchanges.length && exchanges[end]!.status === exchanges[start]!.status) end++
    const run = exchanges.slice(start, end)
    if (run.length < COLLAPSE_FROM) {
      for (const exchange of run) rows.push(row(exchange, showGateway))
    } else {
      const first = run[0]!
      const last = run[run.length - 1]!
      rows.push(row(first, showGateway))
      const [from, to] = [run[1]!.remaining ?? '-', run[run.length - 2]!.remaining ?? '-']
      const alike = from === to ? 'alike' : `, remaining ${from} to ${to}`
      const more = `... ${run.length - 2} more ${first.status}s${from === to ? ' ' : ''}${alike}`
      rows.push(['', ...(showGateway ? [''] : []), more])
      rows.push(row(last, showGateway))
    }
    start = end
  }
  return rows
}

function row(exchange: Exchange, showGateway: boolean): string[] {
  return [
    clockTime(exchange.at),
    ...(showGateway ? [exchange.gateway] : []),
    describeRequest(exchange.request),
    String(exchange.status),
    exchange.remaining ?? '-',
    exchange.retryAfter ?? '-',
    exchange.rateLimit ?? '-',
  ]
}

export function headerRow(showGateway: boolean): string[] {
  return [
    'time',
    ...(showGateway ? ['gw'] : []),
    'request',
    'status',
    'remaining',
    'Retry-After',
    'RateLimit',
  ]
}

/** Pads every column but the last to its widest cell; a spanning row does not widen them. */
export function formatTable(rows: readonly string[][], indent: string): string[] {
  const widths: number[] = []
  for (const cells of rows) {
    if (isSpanning(cells)) continue
    cells.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  }
  return rows.map((cells) => {
    const padded = cells.map((cell, i) =>
      i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0),
    )
    return `${indent}${padded.join('  ')}`.trimEnd()
  })
}

/** The "... n more" rows: blank leading cells, then one cell of text. */
function isSpanning(cells: readonly string[]): boolean {
  return cells.length < 4
}

/** `25 sent, 20 allowed, 5 denied`, with `20 allowed (A 10, B 10)` when there are gateways to tell apart. */
export function tally(exchanges: readonly Exchange[], showGateway: boolean): string {
  const allowed = exchanges.filter((e) => e.status < 400)
  let split = ''
  if (showGateway) {
    const names = [...new Set(exchanges.map((e) => e.gateway))].sort()
    const counts = names.map(
      (name) => `${name} ${allowed.filter((e) => e.gateway === name).length}`,
    )
    split = ` (${counts.join(', ')})`
  }
  return `${exchanges.length} sent, ${allowed.length} allowed${split}, ${exchanges.length - allowed.length} denied`
}
