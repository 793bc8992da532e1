/**
 * Worker-thread entry for load generation. Bundled as `dist/load-worker.js`
 * (see workerEntry in run-point.ts). Protocol: workerData is a ShareInput;
 * the worker posts {type:'warm'} after its warmup, waits for the string 'go',
 * then posts {type:'done', result} or {type:'error', message}.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { describeError } from '../errors.js'
import { runShare, type ShareInput } from './share.js'

const port = parentPort
if (port === null) throw new Error('servegate load worker must run in a worker thread')

const go = (): Promise<void> =>
  new Promise((resolve) => {
    port.postMessage({ type: 'warm' })
    port.once('message', () => resolve())
  })

runShare(workerData as ShareInput, go).then(
  (result) => port.postMessage({ type: 'done', result }),
  (err: unknown) => port.postMessage({ type: 'error', message: describeError(err) }),
)
