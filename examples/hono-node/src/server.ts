import { serve } from '@hono/node-server'
import { createApp } from './app.js'

const { PORT = '3000' } = process.env
const port = Number(PORT)
serve({ fetch: createApp().fetch, port }, (info) => {
  console.log(`Listening on http://localhost:${info.port} (try: curl -i localhost:${info.port}/)`)
})
