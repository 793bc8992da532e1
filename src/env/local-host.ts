/**
 * Is the server on this machine? nvidia-smi only sees this host's GPUs, so
 * GPU details and health samples describe the server only when it runs here.
 */
import { hostname, networkInterfaces } from 'node:os'

/** True when `url`'s host is a loopback name or address, this host's name, or one of its interface addresses. */
export function isServerOnThisHost(
  url: string,
  host: { name: string; addresses: readonly string[] } = { name: hostname(), addresses: localAddresses() },
): boolean {
  let h: string
  try {
    h = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  } catch {
    return false
  }
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '0.0.0.0') return true
  // This host by name, bare or with a domain (`gpu-1` or `gpu-1.lab.example`).
  const name = host.name.toLowerCase()
  if (h === name || h.split('.')[0] === name) return true
  return host.addresses.some((a) => a.toLowerCase() === h)
}

function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
}
