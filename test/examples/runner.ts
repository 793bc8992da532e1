/**
 * `runs-on` as a workflow gives it: a label, a list of labels, or a runner group
 * with labels (`{group: gpu-runners, labels: [self-hosted, b200]}`).
 */
export type RunsOn = string | string[] | { group?: string; labels?: string | string[] }

/** The labels a job asks for, whatever the form. */
export function runnerLabels(runsOn: RunsOn | undefined): string[] {
  if (runsOn === undefined) return []
  if (typeof runsOn === 'object' && !Array.isArray(runsOn)) return ([] as string[]).concat(runsOn.labels ?? [])
  return ([] as string[]).concat(runsOn)
}

/** The runner group a job asks for, or null. */
export function runnerGroup(runsOn: RunsOn | undefined): string | null {
  return typeof runsOn === 'object' && !Array.isArray(runsOn) ? (runsOn.group ?? null) : null
}

/** Every `-v HOST:CONTAINER[:MODE]` / `--volume …` of a shell script, with its mode ('' when none). */
export function volumeMounts(script: string): { host: string; container: string; mode: string }[] {
  const out: { host: string; container: string; mode: string }[] = []
  for (const m of script.matchAll(/(?:^|\s)(?:-v|--volume)[\s=]+"?([^"\s]+)"?/g)) {
    const [host = '', container = '', mode = ''] = m[1]!.split(':')
    out.push({ host, container, mode })
  }
  return out
}
