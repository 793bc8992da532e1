/**
 * A stand-in GPU host for `servegate ab`: an executable `nvidia-smi` that reports `gpus` H200s
 * and lists, as compute apps, every engine process still alive. Each engine command records
 * itself: `engineCommand` writes its pid (the process group leader, which then execs the
 * simulator) into `pids/`, with the GPU its CUDA_VISIBLE_DEVICES names (0 when unset).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT } from '../sweep/cli-child.js'

export interface StandInHost {
  /** Holds `nvidia-smi`: put it first on PATH. */
  bin: string
  /** One file per engine process ever started, named by its pid. */
  pids: string
  /** PATH for the CLI child: the stand-in first. */
  path: string
  /** Pids of the engines started so far. */
  started(): number[]
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
      pid=$(basename "$f"); gpu=$(cat "$f")
      if kill -0 "$pid" 2>/dev/null; then echo "GPU-000$gpu, $pid, python3"; fi
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
    started: () => readdirSync(pids).map(Number),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/**
 * A serve command for the simulator that registers its process with the stand-in host. The
 * bundled CLI starts in a fraction of the time tsx takes, which keeps the many starts of an
 * exclusive job short; the simulator is deterministic (TTFT and ITL fixed).
 */
export function engineCommand(host: StandInHost, simFlags: string): string {
  return `echo \${CUDA_VISIBLE_DEVICES:-0} > ${host.pids}/$$; exec ${process.execPath} ${join(REPO_ROOT, 'dist', 'cli.js')} sim --port {port} ${simFlags}`
}
