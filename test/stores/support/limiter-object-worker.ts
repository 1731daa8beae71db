/** A Worker that only hosts the limiter object, for tests that reach it through miniflare. */
export { TollgateLimiter } from '@tollgate/cloudflare'

export default {
  fetch: (): Response =>
    new Response('the limiter object is reached through its namespace', { status: 404 }),
}
