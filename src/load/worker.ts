/**
 * Worker-thread entry for load generation. Bundled as `dist/load-worker.js`
 * (see workerEntry in run-point.ts). Protocol: workerData is a ShareInput;
 * the worker posts {type:'warm'} after its warmup, waits for the go message ({startMs}),
 * then posts {type:'done', result} or {type:'error', message}.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { describeError } from '../errors.js'
import { runShare, type ShareInput } from './share.js'

const port = parentPort
if (port === null) throw new Error('servegate load worker must run in a worker thread')

// 'go' carries the measured phase's start (ms since the run's epoch) for an open-loop schedule shared by every thread.
const go = (): Promise<number | void> =>
  new Promise((resolve) => {
    port.postMessage({ type: 'warm' })
    port.once('message', (m: unknown) =>
      resolve(typeof m === 'object' && m !== null && typeof (m as { startMs?: unknown }).startMs === 'number' ? (m as { startMs: number }).startMs : undefined),
    )
  })

runShare(workerData as ShareInput, go).then(
  (result) => port.postMessage({ type: 'done', result }),
  (err: unknown) => port.postMessage({ type: 'error', message: describeError(err) }),
)
