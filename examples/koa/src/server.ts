import { createApp } from './app.js'

const { PORT = '3000' } = process.env
const port = Number(PORT)
createApp().listen(port, () => {
  console.log(
    `Listening on http://localhost:${port} (try: curl -i -H 'x-api-key: k_1' localhost:${port}/)`,
  )
})
