/** Running a local program (nvidia-smi, git) for the environment record; a failure is null, never a throw. */
import { execFile } from 'node:child_process'

/** Runs `cmd args…` and gives its stdout, or null when it is missing, fails or times out. */
export type ExecFn = (cmd: string, args: readonly string[], opts?: { cwd?: string }) => Promise<{ stdout: string } | null>

/** The default ExecFn: execFile with PATH lookup (from `env.PATH`), a timeout and a bounded buffer. */
export function createExec(options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): ExecFn {
  const timeout = options.timeoutMs ?? 5000
  return (cmd, args, opts) =>
    new Promise((resolve) => {
      execFile(cmd, [...args], { env: options.env ?? process.env, timeout, cwd: opts?.cwd, maxBuffer: 4 * 1024 * 1024, windowsHide: true }, (err, stdout) => {
        // A missing program (ENOENT), a non-zero exit or a timeout all mean "not known".
        if (err) resolve(null)
        else resolve({ stdout: String(stdout) })
      })
    })
}
