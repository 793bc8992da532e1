/**
 * The config file as the reference engine (A) of an A/B reads it: the same sweep, target and
 * gate settings, none of the candidate's server (its base URL, serve and stop commands), which
 * the reference's own serve command replaces.
 */
import type { ConfigFile } from './schema.js'

export function referenceFile(file: ConfigFile | null): ConfigFile | null {
  if (file?.server === undefined) return file
  const { base_url: _url, command: _command, stop_command: _stop, ...server } = file.server
  return { ...file, server }
}
