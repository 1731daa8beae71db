import {
  type FieldWriter,
  type HeaderEntries,
  isFieldPresent,
  type LimitResponse,
  type Tollgate,
  type Verdict,
} from '@tollgate/core'
import type { NextFunction, Request, Response } from 'express'

/** A denial, as the responder built it: status, headers (already on `res`) and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

/**
 * Puts the rate-limit fields on the response with Node's own API rather than `res.append`,
 * which would run Express's Content-Type charset logic. A field the app already set gets the
 * value appended; Content-Type, single-valued, is replaced. The names already set are read once.
 */
export function setHeaders(res: Response, headers: HeaderEntries): void {
  const present = res.getHeaderNames()
  // Entries are read by index: destructuring an array runs its iterator, an object per entry.
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!
    setField(res, present, entry[0], entry[1])
  }
}

function setField(res: Response, present: readonly string[], name: string, value: string): void {
  if (name === 'Content-Type' || !isFieldPresent(present, name)) res.setHeader(name, value)
  else res.appendHeader(name, value)
}

const NO_NAMES: readonly string[] = []

/**
 * Writes an admitted request's fields as `setHeaders` does, straight from its verdict (no header
 * entries built). One per middleware: it holds a response only while `put` writes to it, which
 * is synchronous.
 */
export class ResponseFields implements FieldWriter {
  private res: Response | undefined
  private present: readonly string[] = NO_NAMES

  put(res: Response, verdict: Verdict, writeFields: Tollgate['writeFields']): void {
    this.res = res
    this.present = res.getHeaderNames()
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

/** The default denial: the responder's status and problem+json body, nothing added. */
export function sendDenial(
  _req: Request,
  res: Response,
  _next: NextFunction,
  denial: Denial,
): void {
  res.statusCode = denial.status
  res.end(denial.body)
}
