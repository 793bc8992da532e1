/** The A/B verdict as markdown and text: the gate's verdict, then how it was measured and the two environments side by side. Pure. */
import type { EnvRecord } from '../types.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { renderVerdictMarkdown } from './verdict-markdown.js'
import { renderVerdictText } from './verdict-text.js'
import type { AbOutcome } from '../gate/ab-verdict.js'
import { scheduleLines } from '../plan/ab-schedule.js'

const ENV_FIELDS: Array<[string, (e: EnvRecord) => string]> = [
  ['Engine', (e) => `${e.engine.name} ${e.engine.version}`],
  ['Model', (e) => `${e.model.id} (${e.model.revision})`],
  ['GPU', (e) => `${e.gpu.count} × ${e.gpu.names.join(', ') || 'unknown'}`],
  ['Driver / CUDA', (e) => `${e.gpu.driver_version} / ${e.gpu.cuda_version}`],
  ['Container', (e) => e.container_digest],
  ['Serve command', (e) => e.serve_command],
  ['Base URL', (e) => e.base_url],
]

/** `A/B over 4 rounds (8 slots, order A B B A A B B A): B against A, paired slot by slot.` */
export function abLine(o: Pick<AbOutcome, 'order'>): string {
  return `A/B over ${o.order.length / 2} rounds (${o.order.length} slots, order ${o.order.join(' ')}): B against A, paired slot by slot on this host.`
}

export function renderAbMarkdown(o: AbOutcome): string {
  const md = renderVerdictMarkdown(o.verdict, { since: 'between A and B' }).replace('### servegate verdict:', '### servegate A/B verdict:')
  const rows = ENV_FIELDS.map(([name, get]) => `| ${name} | ${escapeMarkdown(get(o.a.env))} | ${escapeMarkdown(get(o.b.env))} |`)
  const schedule = scheduleLines(o.schedule).map((l) => `- ${escapeMarkdown(l)}`)
  return `${md.trimEnd()}\n\n${abLine(o)} "Baseline" in the table is A, "candidate" is B.\n\n**Schedule**\n\n${schedule.join('\n')}\n\n**Environments**\n\n| | A (reference) | B (candidate) |\n|---|---|---|\n${rows.join('\n')}\n`
}

export function renderAbText(o: AbOutcome): string {
  return `${abLine(o)}\n${scheduleLines(o.schedule).join('\n')}\n${renderVerdictText(o.verdict, { since: 'between A and B' })}`
}
