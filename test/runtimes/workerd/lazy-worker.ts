// The same app with the middleware built on the first request, inside a handler, where
// Workers allow everything; it checks the request path independently of what start-up may do.
import type { MiddlewareHandler } from 'hono'
import { app, limiter } from './app.js'

let middleware: MiddlewareHandler | undefined

export default app((c, next) => {
  middleware ??= limiter()
  return middleware(c, next)
})
