// The previous major versions, installed under aliases so that the adapters are tested against
// both majors their peer dependencies accept. The parts the tests use have the same API as the
// current majors, whose types they borrow.
declare module 'express4' {
  import express from 'express'
  export default express
}

declare module 'koa2' {
  import Koa from 'koa'
  export default Koa
}
