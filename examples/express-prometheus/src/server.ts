import { createApp } from './app.js'

const { PORT = '3000' } = process.env
const port = Number(PORT)
const { app, report } = createApp()
app.listen(port, () => {
  console.log(`Listening on http://localhost:${port} (metrics: curl localhost:${port}/metrics)`)
})
// Whom the shadow login rule would have hit, every minute: the keys stay in this process.
setInterval(() => {
  const login = report.readRule('login-strict')
  if (login !== undefined && login.denied > 0) console.table(login.heaviest.slice(0, 5))
}, 60_000).unref()
