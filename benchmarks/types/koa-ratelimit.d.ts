// koa-ratelimit ships no types; this covers the options the benchmark uses.
declare module 'koa-ratelimit' {
  import type { Context, Middleware } from 'koa'

  type Options = {
    driver: 'memory' | 'redis'
    db: unknown
    duration?: number
    max?: number
    id?: (ctx: Context) => string | false
    disableHeader?: boolean
  }

  export default function ratelimit(options: Options): Middleware
}
