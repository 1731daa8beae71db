import type { Denial } from '@tollgate/core'
import type { NextFunction, Request, Response } from 'express'

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
