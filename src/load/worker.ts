/**
 * Worker-thread entry for load generation. Bundled as `dist/load-worker.js`
 * (see workerEntry in worker-entry.ts). A thread serves runs one after another
 * (worker-pool.ts). Protocol, per run: the parent posts {type:'share', input}
 * (a ShareInput); the worker posts {type:'warm'} after its warmup, waits for
 * the go message ({startMs}), then posts {type:'done', result} or
 * {type:'error', message}.
 */
import { parentPort } from 'node:worker_threads'
import { describeError } from '../errors.js'
import { runShare, type ShareInput } from './share.js'

const port = parentPort
if (port === null) throw new Error('servegate load worker must run in a worker thread')

/** Set while a run waits for its go message: the next message is that. */
let awaitingGo: ((m: unknown) => void) | null = null

// 'go' carries the measured phase's start (ms since the run's epoch) for an open-loop schedule shared by every thread.
const go = (): Promise<number | void> =>
  new Promise((resolve) => {
    awaitingGo = (m) =>
      resolve(typeof m === 'object' && m !== null && typeof (m as { startMs?: unknown }).startMs === 'number' ? (m as { startMs: number }).startMs : undefined)
    port.postMessage({ type: 'warm' })
  })

port.on('message', (m: unknown) => {
  if (awaitingGo !== null) {
    const resolve = awaitingGo
    awaitingGo = null
    resolve(m)
    return
  }
  if (typeof m !== 'object' || m === null || (m as { type?: unknown }).type !== 'share') return
  runShare((m as { input: ShareInput }).input, go).then(
    (result) => port.postMessage({ type: 'done', result }),
    (err: unknown) => port.postMessage({ type: 'error', message: describeError(err) }),
  )
})
