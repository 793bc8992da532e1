/** Run `servegate` from sources in a child process, as a user would, for the sweep's end-to-end tests (the CLI bundled from src/ when the test run started). */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { ResultFile } from '../../src/types.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface CliRun {
  child: ChildProcess
  /** Resolves when the process has exited, with its code (null when killed by a signal) and output. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>
}

/** Start `servegate ARGS…` in the repository; `env` replaces the child's environment when given. */
export function startCli(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): CliRun {
  const child = spawn(process.execPath, cliArgs(...args), {
    cwd: REPO_ROOT,
    env: opts.env ?? { ...process.env, CI: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()))
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()))
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  return { child, done }
}

/** Run the CLI to completion. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): CliRun['done'] {
  return startCli(args, opts).done
}

/** The result file at `path`, or null while it does not exist yet. Writes are atomic (rename), so a read never sees half a file. */
export function readResult(path: string): ResultFile | null {
  if (!existsSync(path)) return null
  return JSON.parse(readFileSync(path, 'utf8')) as ResultFile
}

/** Number of finished runs in a result. */
export function runCount(result: ResultFile | null): number {
  return result === null ? 0 : result.points.reduce((n, p) => n + p.runs.length, 0)
}

/** Poll `check` every `everyMs` until it is true; rejects after `timeoutMs` or when `run` exits first. */
export async function waitFor(check: () => boolean, run: CliRun, timeoutMs: number, everyMs = 25): Promise<void> {
  let exited = false
  void run.done.then(() => (exited = true))
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (exited) throw new Error('the CLI exited before the condition held')
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * `servegate run` whose sweep has no valid run (too few requests by design, injected failures):
 * it exits 1, and its last line says so and names the result file it wrote.
 */
export function expectNoValidRun(r: { code: number | null; stderr: string }, out: string): void {
  expect(r.code, r.stderr).toBe(1)
  const last = r.stderr.trimEnd().split('\n').at(-1) ?? ''
  expect(last).toMatch(/^servegate: no run of the sweep is valid \(\d+ runs?: [a-z_]+ ×\d+(, [a-z_]+ ×\d+)*\); the result is written to /)
  expect(last.endsWith(` written to ${out}`), last).toBe(true)
  expect(existsSync(out)).toBe(true)
}

/** The exit `servegate run` owes a sweep that wrote `result`: 0 when some run is valid, else 1 (a busy host may spoil every run). */
export function runExitFor(result: ResultFile | null): 0 | 1 {
  return result !== null && result.points.some((p) => p.runs.some((r) => r.validity.valid)) ? 0 : 1
}
