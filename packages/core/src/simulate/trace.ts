import { TraceError } from './trace-error.js'
import type { Arrival } from './types.js'

/** The text formats `parseTrace` reads. */
export type TraceFormat = 'csv' | 'jsonl'

/**
 * The fields of a trace row. Time is `at_ms` or `at_s` (a fraction of a second is fine if it
 * comes to whole ms); `count` repeats the row, `every_ms` apart (default 0: a burst at once).
 */
const FIELDS = ['at_ms', 'at_s', 'key', 'cost', 'method', 'path', 'plan', 'count', 'every_ms']
/** A burst row may stand for this many arrivals at most. */
const MAX_COUNT = 1_000_000

/**
 * Reads a trace: CSV with a header row (`at_ms,key,cost`; blank lines and lines starting with
 * `#` are skipped) or JSON lines (`{"at_ms": 0, "key": "k_1", "cost": 1}` per line). A field
 * it does not know is refused, so a misspelt column is not silently dropped.
 * @example
 * parseTrace('at_ms,count,every_ms\n50000,200,100', 'csv') // 200 arrivals, one every 100 ms
 */
export function parseTrace(text: string, format: TraceFormat): Arrival[] {
  const rows = format === 'csv' ? csvRows(text) : jsonRows(text)
  const arrivals: Arrival[] = []
  for (const { line, fields } of rows) {
    for (const name of Object.keys(fields)) {
      if (!FIELDS.includes(name)) {
        throw new TraceError(
          `unknown field (fields: ${FIELDS.join(', ')})`,
          arrivals.length,
          name,
          line,
        )
      }
    }
    const field = (name: string) => fields[name]
    const number = (name: string): number | undefined => {
      const value = field(name)
      if (value === undefined || value === '') return undefined
      const parsed = typeof value === 'number' ? value : Number(value)
      if (typeof value === 'boolean' || !Number.isFinite(parsed)) {
        throw new TraceError(
          `expected a number, got ${JSON.stringify(value)}`,
          arrivals.length,
          name,
          line,
        )
      }
      return parsed
    }
    const whole = (name: string, value: number | undefined, min: number): number | undefined => {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) {
        throw new TraceError(
          `expected a whole number ≥ ${min}, got ${value}`,
          arrivals.length,
          name,
          line,
        )
      }
      return value
    }
    const seconds = number('at_s')
    const ms = number('at_ms')
    if ((seconds === undefined) === (ms === undefined)) {
      throw new TraceError(
        'give the time as at_ms or at_s (one of them)',
        arrivals.length,
        'at_ms',
        line,
      )
    }
    const at = whole(
      ms === undefined ? 'at_s' : 'at_ms',
      ms ?? Math.round(seconds! * 1e6) / 1e3,
      0,
    )!
    const count = whole('count', number('count'), 1) ?? 1
    const every = whole('every_ms', number('every_ms'), 0) ?? 0
    if (count > MAX_COUNT || arrivals.length + count > MAX_COUNT) {
      throw new TraceError(`more than ${MAX_COUNT} arrivals`, arrivals.length, 'count', line)
    }
    const cost = whole('cost', number('cost'), 0)
    const text = (name: string): string | undefined => {
      const value = field(name)
      if (value === undefined || value === '') return undefined
      if (typeof value !== 'string') {
        throw new TraceError(
          `expected a string, got ${JSON.stringify(value)}`,
          arrivals.length,
          name,
          line,
        )
      }
      return value
    }
    const base = strip({
      key: text('key'),
      cost,
      method: text('method'),
      path: text('path'),
      plan: text('plan'),
    })
    for (let i = 0; i < count; i++) arrivals.push({ at: at + i * every, ...base })
  }
  return arrivals
}

type Row = { line: number; fields: Record<string, unknown> }

function csvRows(text: string): Row[] {
  const lines = text.split(/\r?\n/)
  let header: string[] | undefined
  const rows: Row[] = []
  lines.forEach((raw, i) => {
    const content = raw.trim()
    if (content === '' || content.startsWith('#')) return
    const cells = content.split(',').map((cell) => cell.trim())
    if (header === undefined) {
      header = cells
      return
    }
    if (cells.length !== header.length) {
      throw new TraceError(
        `expected ${header.length} cells (${header.join(',')}), got ${cells.length}`,
        rows.length,
        'row',
        i + 1,
      )
    }
    rows.push({
      line: i + 1,
      fields: Object.fromEntries(header.map((name, c) => [name, cells[c]])),
    })
  })
  if (header === undefined)
    throw new TraceError('no header row (e.g. at_ms,key,cost)', 0, 'header', 1)
  return rows
}

function jsonRows(text: string): Row[] {
  const rows: Row[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      throw new TraceError(`not valid JSON: ${(error as Error).message}`, rows.length, 'row', i + 1)
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TraceError('expected an object per line', rows.length, 'row', i + 1)
    }
    rows.push({ line: i + 1, fields: value as Record<string, unknown> })
  })
  return rows
}

/** The fields that are set: an arrival does not carry `key: undefined`. */
function strip(value: Record<string, string | number | undefined>): Omit<Arrival, 'at'> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))
}
