import net from 'node:net';

/** Whether a server could take its address, and if not, the one line an operator needs: what to change. */
export type ListenOutcome =
  | { kind: 'listening' }
  | { kind: 'refused'; code: string; message: string };

/** The settings that chose the address, by the names the operator set them with (PORT and HOST, or the demo's). */
export interface AddressSettings {
  port: string;
  host: string;
}

/**
 * `server.listen(port, host)`, its failure as a typed outcome. A refusal the operator can fix (the port taken,
 * a port below 1024 without the privilege, an address not of this machine) names the setting to change;
 * anything else is thrown, as it was.
 */
export function listen(server: net.Server, port: number, host: string, settings: AddressSettings): Promise<ListenOutcome> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const message = refusal(error.code, port, host, settings);
      if (message === undefined) reject(error);
      else resolve({ kind: 'refused', code: error.code!, message });
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.removeListener('error', failed);
      resolve({ kind: 'listening' });
    });
  });
}

function refusal(code: string | undefined, port: number, host: string, settings: AddressSettings): string | undefined {
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is in use by another process: stop it, or set ${settings.port} to a free port`;
    case 'EACCES':
      return `port ${port} on ${host} needs privileges this process does not have: set ${settings.port} to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine: set ${settings.host} to one of its addresses`;
    default:
      return undefined;
  }
}

/** Whether `port` on `host` can be listened on now: a server is opened there and closed again. */
export async function addressFree(port: number, host: string, settings: AddressSettings): Promise<ListenOutcome> {
  const probe = net.createServer();
  const outcome = await listen(probe, port, host, settings);
  if (outcome.kind === 'listening') await new Promise((resolve) => probe.close(resolve));
  return outcome;
}
