/**
 * Start the commands a pull request controls (the serve command, its stop
 * command, the reference command, A/B sides) where no process holding a token
 * is visible to them: a PID namespace of their own with its own /proc, so
 * `/proc/<the Action's pid>/environ` does not exist for them.
 *
 * util-linux `unshare` does it, in two layers:
 *   unshare --user --map-root-user --pid --fork --mount --mount-proc --kill-child --
 *     unshare --user --map-root-user --mount -- node -e SUPERVISOR …
 * The outer layer makes the PID namespace and mounts its /proc. The inner one
 * puts the command in a user namespace below it, where the mounts it inherits
 * are locked: with one layer the command is root over the mount namespace
 * that mounted /proc and `umount /proc` shows the host's /proc again. A user
 * namespace also keeps a root runner's command from being root over the host.
 * /dev is the host's, so GPU devices stay reachable.
 *
 * PID 1 of the namespace is a small node supervisor, not the command: a PID 1
 * ignores SIGTERM it has no handler for, so `sh -c 'exec sleep 60'` as PID 1
 * would outlive every stop. The supervisor runs the command in the same
 * process group (a SIGTERM to the group reaches it as before; servegate waits
 * for its `up` first, since a PID 1 drops a signal that comes before its
 * command exists), runs the stop
 * command inside the namespace when servegate writes `stop` on its stdin, and
 * reports how each ended on fd 3 (an exit by a signal cannot be passed on by
 * a PID 1). When PID 1 exits, the kernel kills whatever is left in the
 * namespace; when the outer unshare is killed, `--kill-child` takes PID 1.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** `server.isolation`: `auto` isolates where the host can; `none` never does (the base branch's choice). */
export type IsolationSetting = 'auto' | 'none'

/** How a server's commands are started. */
export type Launch = { kind: 'plain' } | { kind: 'namespace'; unshare: string; node: string }

/** What the probe found: a launch that isolates, or why the host cannot. */
export type IsolationProbe = { ok: true; launch: Launch & { kind: 'namespace' } } | { ok: false; reason: string }

/** The words PID 1's command line carries, which the probe looks for. */
const MARK = 'servegate-supervisor'

/** The supervisor, PID 1 of the namespace: argv = [report ('3' or '-'), command, stop command or '']. */
const SUPERVISOR = `/* ${MARK} */
const { spawn } = require('child_process')
const { writeSync } = require('fs')
const { constants } = require('os')
const [report, command, stop] = process.argv.slice(1)
const say = (s) => { if (report === '3') try { writeSync(3, s + '\\n') } catch {} }
const how = (code, sig) => (sig ? 'signal ' + sig : 'code ' + code)
let status = null
let stopping = null
const finish = () => { if (status !== null && (stopping === null || stopping.ended)) process.exit(status) }
const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'inherit', 'inherit'] })
say('up')
child.on('error', () => { say('exit code 127'); status = 127; finish() })
child.on('exit', (code, sig) => { say('exit ' + how(code, sig)); status = sig ? 128 + (constants.signals[sig] || 0) : code; finish() })
process.stdin.on('error', () => {})
process.stdin.on('data', (d) => {
  if (!stop || stopping !== null || !String(d).includes('stop')) return
  stopping = { ended: false }
  const s = spawn('/bin/sh', ['-c', stop], { stdio: ['ignore', 'inherit', 'inherit'] })
  const end = (code, sig) => { if (stopping.ended) return; say('stop ' + how(code, sig)); stopping.ended = true; finish() }
  s.on('error', () => end(127, null))
  s.on('exit', end)
})
`

/** The program and arguments that start `command` under `launch`; `stop`: run inside on `stop` (stdin); `report`: fd 3 is servegate's. */
export function launchArgv(launch: Launch, command: string, stop: string | null, report: boolean): { file: string; args: string[] } {
  if (launch.kind === 'plain') return { file: '/bin/sh', args: ['-c', command] }
  return {
    file: launch.unshare,
    args: [
      ...['--user', '--map-root-user', '--pid', '--fork', '--mount', '--mount-proc', '--kill-child', '--'],
      ...[launch.unshare, '--user', '--map-root-user', '--mount', '--'],
      ...[launch.node, '-e', SUPERVISOR, report ? '3' : '-', command, stop ?? ''],
    ],
  }
}

/** `name` found on PATH (or in /usr/bin, /bin), or null. */
export function findExecutable(name: string, path: string | undefined): string | null {
  for (const dir of [...(path ?? '').split(delimiter), '/usr/bin', '/bin'].filter((d) => d !== '')) {
    try {
      accessSync(join(dir, name), constants.X_OK)
      return join(dir, name)
    } catch {
      // not here
    }
  }
  return null
}

/**
 * The check the probe runs inside: how many processes it sees, PID 1's command line, and whether
 * `umount /proc` (which would show the host's /proc again) is refused.
 */
const PROBE =
  'n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "pids=$n"; if umount /proc 2>/dev/null; then echo umount=done; else echo umount=refused; fi; echo "pid1=$(tr "\\0" " " < /proc/1/cmdline)"'

/** Most processes the probe may see inside: the supervisor, its shell, the shell's subshells. */
const PROBE_MAX_PIDS = 6

/** Judge the probe's output: isolated only when PID 1 is the supervisor, few processes show, and /proc stays mounted. */
export function judgeProbeOutput(stdout: string): string | null {
  const pids = Number(/^pids=(\d+)$/m.exec(stdout)?.[1] ?? NaN)
  const pid1 = /^pid1=(.*)$/m.exec(stdout)?.[1] ?? ''
  if (!Number.isFinite(pids)) return `the probe printed no process count (${JSON.stringify(stdout.trim().slice(0, 200))})`
  if (!pid1.includes(MARK))
    return `PID 1 inside is not servegate's supervisor (${JSON.stringify(pid1.slice(0, 80))}): the command would share the host's process list`
  if (pids > PROBE_MAX_PIDS) return `the command saw ${pids} processes, not only its own`
  if (!/^umount=refused$/m.test(stdout)) return "the command could unmount its /proc and see the host's processes"
  return null
}

/** Start the probe under `launch` and judge what it saw (10 s at most). */
export async function probeNamespaces(env: Readonly<Record<string, string | undefined>> = process.env, timeoutMs = 10_000): Promise<IsolationProbe> {
  const unshare = findExecutable('unshare', env['PATH'])
  if (unshare === null) return { ok: false, reason: 'util-linux unshare is not installed' }
  const launch = { kind: 'namespace' as const, unshare, node: process.execPath }
  const { file, args } = launchArgv(launch, PROBE, null, false)
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(file, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: env['PATH'] ?? '/usr/bin:/bin' },
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    child.once('error', (err) => resolve({ code: null, stdout, stderr: err.message }))
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
  if (out.code !== 0) {
    const why = out.stderr.trim().split('\n').at(-1) ?? ''
    return { ok: false, reason: `unshare could not make the namespaces (${why === '' ? `exit ${out.code ?? 'by a signal'}` : why})` }
  }
  const problem = judgeProbeOutput(out.stdout)
  return problem === null ? { ok: true, launch } : { ok: false, reason: problem }
}

let hostProbe: Promise<IsolationProbe> | null = null

/** This host's probe, run once per process (a host does not gain or lose namespaces while servegate runs). */
export function hostIsolation(): Promise<IsolationProbe> {
  hostProbe ??= probeNamespaces()
  return hostProbe
}
