// As users write it: the middleware is built when the module loads (Workers' global scope).
import { app, limiter } from './app.js'

export default app(limiter())
