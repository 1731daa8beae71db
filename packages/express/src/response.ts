import type { HeaderEntries, LimitResponse } from '@tollgate/core'
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
    const name = entry[0]
    if (name === 'Content-Type' || !isPresent(present, name)) res.setHeader(name, entry[1])
    else res.appendHeader(name, entry[1])
  }
}

/** True when `name` is among the lower-case names of a Node response's fields. */
function isPresent(present: readonly string[], name: string): boolean {
  return present.length > 0 && present.includes(name.toLowerCase())
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
