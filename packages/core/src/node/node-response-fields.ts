import type { FieldSink } from '../adapter/kit.js'
import { carriesSingleValuedField, type WriteVerdictFields } from '../headers/families.js'
import { mergeFields } from '../headers/field-merge.js'
import type { FieldWriter, HeaderEntries } from '../headers/types.js'
import type { Verdict } from '../limiter/types.js'

/**
 * What the field writers use of a Node `http.ServerResponse` (Express's `res`, Koa's `ctx.res`):
 * a shape, so that core imports nothing from Node.
 */
export type NodeResponse = {
  /** Names of the fields set so far: a field already there is merged, not duplicated. */
  getHeaderNames(): string[]
  /** A field's value as set so far. */
  getHeader(name: string): number | string | string[] | undefined
  /** Sets a field, replacing its value. */
  setHeader(name: string, value: string): unknown
  /** Adds a value to a field, keeping the values it had. */
  appendHeader(name: string, value: string): unknown
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

/** Lower-case forms of the field names written so far: a handful, fixed by the configuration. */
const lowerCaseNames = new Map<string, string>()

/** Field names come from configuration; the bound is a safety net against unbounded input. */
const MAX_NAMES = 256

/** A field name in lower case, remembered (`lowerCaseNames`). */
function lowerCaseName(name: string): string {
  const lower = name.toLowerCase()
  if (lowerCaseNames.size < MAX_NAMES) lowerCaseNames.set(name, lower)
  return lower
}

const NO_NAMES: readonly string[] = []

/**
 * The field sink of Node responses (Express's `res`, Koa's `ctx.res`): entries are written as
 * `putEntries` does, and an admitted request's fields straight from its verdict (no
 * header entries built). One per middleware: it holds a response only while `putVerdict` writes
 * to it, which is synchronous.
 */
export class NodeResponseFieldWriter implements FieldWriter, FieldSink<NodeResponse> {
  private res: NodeResponse | undefined
  private present: readonly string[] = NO_NAMES

  /**
   * Writes entries in order, as `write` writes each field; onto a response that already carries
   * a single-valued rate-limit field (another Tollgate middleware's), merged as `mergeFields`
   * says. The names already set are read once.
   */
  putEntries(res: NodeResponse, entries: HeaderEntries): void {
    const present = res.getHeaderNames()
    if (carriesSingleValuedField(present)) {
      writeMerged(res, entries)
      return
    }
    this.res = res
    this.present = present
    try {
      // Entries are read by index: destructuring an array runs its iterator, an object per entry.
      for (let i = 0; i < entries.length; i++) this.write(entries[i]![0], entries[i]![1])
    } finally {
      this.res = undefined
      this.present = NO_NAMES
    }
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

  /**
   * Sets a field, or appends to one of that name the response already has (the app's, or a list
   * field another middleware wrote); `Content-Type` is always replaced. Express has always set
   * X-Powered-By, so the names are looked up on every request there, in lower case, not made
   * anew.
   */
  write(name: string, value: string): void {
    const res = this.res!
    const present = this.present
    if (
      name === 'Content-Type' ||
      present.length === 0 ||
      !present.includes(lowerCaseNames.get(name) ?? lowerCaseName(name))
    )
      res.setHeader(name, value)
    else res.appendHeader(name, value)
  }
}

/** The writer `setNodeResponseFields` writes through: it holds a response only while it writes. */
// Pure: a bundle that only reads `headerListMayBeCut` from this entry (Hono) drops the writer.
const entriesWriter = /* @__PURE__ */ new NodeResponseFieldWriter()

/**
 * Puts response fields on a Node response with its own API (not a framework's, which may add
 * logic: Express's `res.append` runs its Content-Type charset rules), as
 * `NodeResponseFieldWriter.putEntries` does.
 */
export function setNodeResponseFields(res: NodeResponse, headers: HeaderEntries): void {
  entriesWriter.putEntries(res, headers)
}
