import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createExec, type ExecFn } from '../../src/env/exec.js'

const NA = 'Not Active'
// Reason fields in THROTTLE_REASON_FIELDS order; GPU0 has sw_power_cap and hw_thermal_slowdown active.
const GPU0_REASONS = [NA, NA, 'Active', NA, 'Active', NA, NA, NA].join(', ')
const GPU1_REASONS = Array(8).fill(NA).join(', ')

/** A stand-in nvidia-smi with two H100s; `oldDriver` rejects clocks_event_reasons.* like drivers before the rename. */
export function fakeNvidiaSmiScript(opts: { oldDriver?: boolean } = {}): string {
  const reasonsPrefix = opts.oldDriver ? 'clocks_throttle_reasons' : 'clocks_event_reasons'
  return `#!/bin/sh
case "$*" in
  *--query-compute-apps*)
    printf '%s\\n' 'GPU-aaa, 111, python3' 'GPU-aaa, 222, stress' 'GPU-bbb, 111, python3' ;;
  *${reasonsPrefix}.gpu_idle*)
    printf '%s\\n' '0, GPU-aaa, NVIDIA H100 80GB HBM3, 97, 1410, 1980, 650.50, 81, ${GPU0_REASONS}' '1, GPU-bbb, NVIDIA H100 80GB HBM3, 95, 1980, 1980, [N/A], 60, ${GPU1_REASONS}' ;;
  --query-gpu=uuid*)
    printf '%s\\n' 'GPU-aaa' 'GPU-bbb' ;;
  *--query-gpu=index,name,driver_version*)
    printf '%s\\n' '0, NVIDIA H100 80GB HBM3, 550.54.15, 1410, 1980, 2619, 2619' '1, NVIDIA H100 80GB HBM3, 550.54.15, 1980, 1980, 2619, 2619' ;;
  "")
    printf '%s\\n' '+-----------------------------------------------------------------------------+' '| NVIDIA-SMI 550.54.15      Driver Version: 550.54.15      CUDA Version: 12.4     |' ;;
  *)
    echo 'Field is not a valid field to query.' >&2; exit 2 ;;
esac
`
}

/** A temp dir holding an executable `nvidia-smi` (or nothing), and an ExecFn whose PATH is only that dir. */
export function pathWith(script: string | null): { exec: ExecFn; dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-smi-'))
  if (script !== null) {
    const file = join(dir, 'nvidia-smi')
    writeFileSync(file, script)
    chmodSync(file, 0o755)
  }
  return { exec: createExec({ env: { PATH: dir } }), dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}
