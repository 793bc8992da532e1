/**
 * A stand-in GPU host for `servegate ab`: an executable `nvidia-smi` that reports `gpus` H200s
 * and lists, as compute apps, every engine process still alive. Each engine command records
 * itself: `engineCommand` writes a file into `pids/` named by its port (and a random suffix: a
 * port may be free again for a later start) holding the GPU its CUDA_VISIBLE_DEVICES names (0
 * when unset). nvidia-smi names the engine by its pid on this host, as the real one does: the
 * engine runs in a PID namespace of its own, where `$$` is a number only that namespace knows,
 * so the stand-in finds it by its port on the host's process list.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT } from '../sweep/cli-child.js'

export interface StandInHost {
  /** Holds `nvidia-smi`: put it first on PATH. */
  bin: string
  /** One file per engine ever started, named `PORT.RANDOM`, holding its GPU. */
  pids: string
  /** PATH for the CLI child: the stand-in first. */
  path: string
  /** The engines started so far (their files' names). */
  started(): string[]
  cleanup(): void
}

const REASONS = Array(8).fill('Not Active').join(', ')

export function standInHost(gpus: number): StandInHost {
  const root = mkdtempSync(join(tmpdir(), 'servegate-gpuhost-'))
  const bin = join(root, 'bin')
  const pids = join(root, 'pids')
  mkdirSync(bin)
  mkdirSync(pids)
  const each = (row: string): string => `i=0; while [ $i -lt ${gpus} ]; do echo "${row}"; i=$((i+1)); done`
  const script = `#!/bin/sh
case "$*" in
  *--query-compute-apps*)
    for f in "${pids}"/*; do
      [ -f "$f" ] || continue
      name=$(basename "$f"); port=\${name%%.*}; gpu=$(cat "$f")
      pid=$(pgrep -f -- "sim --port $port " | head -n 1)
      if [ -n "$pid" ]; then echo "GPU-000$gpu, $pid, python3"; fi
    done ;;
  *clocks_event_reasons.gpu_idle*)
    ${each(`$i, GPU-000$i, NVIDIA H200, 90, 1980, 1980, 500.00, 60, ${REASONS}`)} ;;
  *--query-gpu=index,name,driver_version*)
    ${each('$i, NVIDIA H200, 570.86.15, 1980, 1980, 3201, 3201')} ;;
  "")
    echo '| NVIDIA-SMI 570.86.15      Driver Version: 570.86.15      CUDA Version: 12.8     |' ;;
  *)
    echo 'Field is not a valid field to query.' >&2; exit 2 ;;
esac
`
  writeFileSync(join(bin, 'nvidia-smi'), script)
  chmodSync(join(bin, 'nvidia-smi'), 0o755)
  return {
    bin,
    pids,
    path: `${bin}:${process.env['PATH'] ?? ''}`,
    started: () => readdirSync(pids),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/**
 * A serve command for the simulator that registers its process with the stand-in host. The
 * bundled CLI starts in a fraction of the time tsx takes, which keeps the many starts of an
 * exclusive job short; the simulator is deterministic (TTFT and ITL fixed).
 */
export function engineCommand(host: StandInHost, simFlags: string): string {
  return `echo \${CUDA_VISIBLE_DEVICES:-0} > ${host.pids}/{port}.$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); exec ${process.execPath} ${join(REPO_ROOT, 'dist', 'cli.js')} sim --port {port} ${simFlags}`
}
