// What `wrangler types` declares for a Worker bound to the limiter object as the samples and
// fixtures are (`LIMITER`, see examples/hono-durable-object/wrangler.toml): its bindings, which
// `cloudflare:workers` exports at module scope. Bundles leave the module to the runtime.
declare module 'cloudflare:workers' {
  export const env: { readonly LIMITER: import('@tollgate/cloudflare').LimiterNamespace<unknown> }
}
