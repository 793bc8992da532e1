export { PORT_PLACEHOLDER, defaultServerLogPath, fillPort, wantsPort } from './command.js'
export { ServerExitedDuringSweep, ServerStartFailed } from './errors.js'
export { ServerStartCancelled, freeLoopbackPort, startServer, type ServeOptions, type ServerHandle } from './start.js'
export { describeExit, type ServerExit } from './server-process.js'
