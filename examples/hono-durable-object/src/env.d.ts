// The Worker's bindings (wrangler.toml), which `cloudflare:workers` exports at module scope. Declared
// here rather than with @cloudflare/workers-types, whose globals clash with Node's in this
// workspace's type check.
declare module 'cloudflare:workers' {
  export const env: {
    readonly LIMITER: import('@tollgate/cloudflare').LimiterNamespace<unknown>
  }
}
