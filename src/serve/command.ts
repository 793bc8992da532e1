/** The serve command as text: its `{port}` placeholder and where its log goes. Pure. */

/** Replaced by a free loopback port in a serve command (`vllm serve M --port {port}`). */
export const PORT_PLACEHOLDER = '{port}'

/** Whether the command asks servegate for a port (then the base URL follows it). */
export function wantsPort(command: string): boolean {
  return command.includes(PORT_PLACEHOLDER)
}

/** The command with every `{port}` replaced by `port`. */
export function fillPort(command: string, port: number): string {
  return command.replaceAll(PORT_PLACEHOLDER, String(port))
}

/** The server log beside the result file: `results/x.json` → `results/x.server.log`. */
export function defaultServerLogPath(out: string): string {
  return `${out.replace(/\.json$/i, '')}.server.log`
}
