/**
 * A server servegate started that failed: before it was ready, or during the
 * sweep. UsageErrors (exit code 2): the first line says what happened, the
 * lines after it are the server log's tail, already redacted.
 */
import { UsageError } from '../errors.js'
import type { ServerExit } from './server-process.js'
import { formatTail } from './server-log.js'

/** The server exited before it was ready, or was not ready in time (it is stopped by then). */
export class ServerStartFailed extends UsageError {
  constructor(
    headline: string,
    readonly logTail: readonly string[],
    readonly logPath: string,
    hint: string,
  ) {
    super(`${headline}\n${formatTail(logTail, logPath)}`, hint)
  }
}

/**
 * The server exited while the sweep ran: the sweep was cut, the finished runs
 * are in the result file (marked `interrupted.reason: server_exited`), and the
 * gate calls such a candidate broken.
 */
export class ServerExitedDuringSweep extends UsageError {
  constructor(
    headline: string,
    readonly exit: ServerExit,
    readonly logTail: readonly string[],
    readonly logPath: string,
    readonly resultPath: string,
  ) {
    super(`${headline}\n${formatTail(logTail, logPath)}`, `The whole server log is in ${logPath}; the finished runs are in ${resultPath}.`)
  }
}
