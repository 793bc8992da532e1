/**
 * Load threads kept between runs. A thread started for every run and terminated after it cost
 * about 0.24 s a run on 2 cores (bench/run-overhead.ts: starting it, loading the worker bundle,
 * compiling the client's code again during the warmup, terminating it). A thread now serves the
 * runs of a process one after another: each run still builds its own connection pool, event-loop
 * monitor and warmup inside it (share.ts), so what a run measures is its own; what carries over is
 * the compiled code, which a fresh thread would compile again during the warmup.
 *
 * A thread that failed or was cut by a cancel is terminated, never reused. Idle threads are unref'd,
 * so they never keep the process alive. Threads are kept per worker code (workerEntry): a process
 * whose entry changes (a test that runs the sources through tsx) gets threads of the code it asked for.
 */
import type { Worker } from 'node:worker_threads'
import { spawnLoadWorker, workerEntry } from './worker-entry.js'

const idle = new Map<string, Worker[]>()
/** The pool key (worker code) of each thread the pool started. */
const keys = new WeakMap<Worker, string>()

/** A load thread for one run: an idle one of the current worker code, or a new one. Give it back with releaseLoadWorker, or terminate it. */
export function acquireLoadWorker(): Worker {
  const entry = workerEntry()
  const key = `${entry.url.href} ${entry.tsxApi ?? ''}`
  const kept = idle.get(key) ?? []
  idle.set(key, kept)
  const w = kept.pop()
  if (w !== undefined) {
    w.ref()
    return w
  }
  const fresh = spawnLoadWorker(entry)
  keys.set(fresh, key)
  // A thread that fails or dies while idle leaves the pool (a run's own handlers judge one that fails in use).
  const drop = (): void => {
    const i = kept.indexOf(fresh)
    if (i >= 0) kept.splice(i, 1)
  }
  fresh.on('error', drop)
  fresh.once('exit', drop)
  return fresh
}

/** Keep `w`, which finished its run cleanly and holds no listener of that run, for the next run. */
export function releaseLoadWorker(w: Worker): void {
  const key = keys.get(w)
  if (key === undefined) return void w.terminate()
  w.unref()
  idle.get(key)!.push(w)
}

/** Idle load threads now, over every worker code (for tests). */
export function idleLoadWorkers(): number {
  let n = 0
  for (const list of idle.values()) n += list.length
  return n
}

/** Terminate every idle load thread (the next run starts a new one). */
export async function closeIdleLoadWorkers(): Promise<void> {
  const all = [...idle.values()].flatMap((list) => list.splice(0))
  await Promise.all(all.map((w) => w.terminate()))
}
