// autocannon ships no types; this covers what the adapter benchmark uses.
declare module 'autocannon' {
  type Options = { url: string; connections?: number; pipelining?: number; duration?: number }
  type Result = {
    requests: { total: number; average: number }
    errors: number
    non2xx: number
  }
  export default function autocannon(options: Options): Promise<Result>
}
