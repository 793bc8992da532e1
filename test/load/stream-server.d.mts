export interface StreamServerConfig {
  ttftMs: number
  itlMs: number
  mode?: 'staggered' | 'stepped'
  port?: number
}
export interface StreamServerStats {
  open: number
  maxOpen: number
  openArea: number
  served: number
  sockets: number
  /** Connections ever accepted. */
  accepted: number
}
export interface ServerRequestLog {
  id: string
  /** Request body received, this process's performance.now() ms. */
  openMs: number
  /** Response closed, same clock; -1 while open. */
  closeMs: number
  /** Request arrived (headers), process.hrtime.bigint() as a decimal string. */
  arrivalNs: string
}
export interface StreamServerHandle {
  port: number
  url: string
  stats(): StreamServerStats
  requests(): ServerRequestLog[]
  resetStats(): void
  close(): Promise<void>
}
export function startStreamServer(cfg: StreamServerConfig): Promise<StreamServerHandle>
