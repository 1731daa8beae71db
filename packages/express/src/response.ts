import type { LimitResponse } from '@tollgate/core'
import type { NextFunction, Request, Response } from 'express'

/** A denial, as the responder built it: status, headers (already on `res`) and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

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
