import type { FieldSink, WriteVerdictFields } from '../adapter/kit.js'
import { carriesSingleValuedField, mergeFields } from '../headers/field-merge.js'
import { isFieldPresent } from '../headers/field-names.js'
import type { FieldWriter, HeaderEntries } from '../headers/types.js'
import type { Verdict } from '../limiter/types.js'

/**
 * What the field writers use of a Node `http.ServerResponse` (Express's `res`, Koa's `ctx.res`):
 * a shape, so that core imports nothing from Node.
 */
export type NodeResponse = {
  getHeaderNames(): string[]
  getHeader(name: string): number | string | string[] | undefined
  setHeader(name: string, value: string): unknown
  appendHeader(name: string, value: string): unknown
}

/**
 * Puts response fields on a Node response with its own API (not a framework's, which may add
 * logic: Express's `res.append` runs its Content-Type charset rules). A list field already set
 * gets the value appended; Content-Type is replaced; single-valued rate-limit fields already set
 * (another Tollgate middleware's) are merged as `mergeFields` says. The names already set are
 * read once.
 */
export function setNodeResponseFields(res: NodeResponse, headers: HeaderEntries): void {
  const present = res.getHeaderNames()
  if (carriesSingleValuedField(present)) {
    writeMerged(res, headers)
    return
  }
  // Entries are read by index: destructuring an array runs its iterator, an object per entry.
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!
    setField(res, present, entry[0], entry[1])
  }
}

function setField(res: NodeResponse, present: readonly string[], name: string, value: string) {
  if (name === 'Content-Type' || !isFieldPresent(present, name)) res.setHeader(name, value)
  else res.appendHeader(name, value)
}

function writeMerged(res: NodeResponse, headers: HeaderEntries): void {
  const existing = (name: string) => {
    const value = res.getHeader(name)
    return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : `${value}`
  }
  for (const [name, value, write] of mergeFields(headers, existing)) {
    if (write === 'set') res.setHeader(name, value)
    else res.appendHeader(name, value)
  }
}

const NO_NAMES: readonly string[] = []

/**
 * The field sink of Node responses (Express's `res`, Koa's `ctx.res`): entries are written as
 * `setNodeResponseFields` does, and an admitted request's fields straight from its verdict (no
 * header entries built). One per middleware: it holds a response only while `putVerdict` writes
 * to it, which is synchronous.
 */
export class NodeResponseFieldWriter implements FieldWriter, FieldSink<NodeResponse> {
  private res: NodeResponse | undefined
  private present: readonly string[] = NO_NAMES

  putEntries(res: NodeResponse, entries: HeaderEntries): void {
    setNodeResponseFields(res, entries)
  }

  putVerdict(res: NodeResponse, verdict: Verdict, writeFields: WriteVerdictFields): void {
    const present = res.getHeaderNames()
    if (carriesSingleValuedField(present)) {
      const entries: Array<readonly [string, string]> = []
      writeFields(verdict, { write: (name, value) => entries.push([name, value]) })
      writeMerged(res, entries)
      return
    }
    this.res = res
    this.present = present
    try {
      writeFields(verdict, this)
    } finally {
      this.res = undefined
      this.present = NO_NAMES
    }
  }

  write(name: string, value: string): void {
    setField(this.res!, this.present, name, value)
  }
}
