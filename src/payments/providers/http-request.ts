import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

/**
 * Calls in flight to one provider host at most; more wait for a connection, within their deadline. It
 * bounds this process's sockets whatever starts them. As many as the worker's jobs at once
 * (WEBHOOK_JOB_CONCURRENCY), so that where an account's limits are raised, the account's limits set the
 * pace and no job waits for a socket (with 128, one worker at 150 ms was held to about 850 events a second).
 */
export const PROVIDER_MAX_IN_FLIGHT = 200;

/**
 * One HTTP exchange with a provider over kept-alive connections (the worker talks to the same host
 * for every event; a new TLS connection per call would dominate). One deadline covers the wait for a
 * connection, connect, headers and body; it rejects with an error named `TimeoutError`. A GET on a
 * kept-alive socket the server had just closed is tried once more on a fresh one.
 */
const AGENT_OPTIONS: http.AgentOptions = { keepAlive: true, maxSockets: PROVIDER_MAX_IN_FLIGHT, scheduling: 'lifo' };
const agents = {
  'http:': new http.Agent(AGENT_OPTIONS),
  'https:': new https.Agent(AGENT_OPTIONS),
};

/**
 * Trusts `authorities` (PEM) besides the CAs Node trusts by default, for every call to the shop and the providers.
 * For NODE_EXTRA_CA_CERTS named in `.env`, which Node reads only from the environment it starts with. Called at
 * start, before any call: the HTTPS agent is replaced, with the default list as Node has it where it can say
 * (`tls.getCACertificates`, Node 22.15 and later: the system store too when Node uses it), else Node's bundled list.
 */
export function trustCertificateAuthorities(authorities: string[]): void {
  const defaults = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates?.('default') ?? tls.rootCertificates;
  agents['https:'] = new https.Agent({ ...AGENT_OPTIONS, ca: [...defaults, ...authorities] });
}

/** Provider calls this process has sent and not yet had answered, and those waiting for a connection to send on. */
export function providerCallsInFlight(): { sent: number; waiting: number } {
  const count = (lists: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(lists).reduce((sum, list) => sum + (list?.length ?? 0), 0);
  let sent = 0;
  let waiting = 0;
  for (const agent of Object.values(agents)) {
    sent += count(agent.sockets) - count(agent.freeSockets);
    waiting += count(agent.requests);
  }
  return { sent, waiting };
}

export interface ProviderResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export type ProviderFailureKind = 'not_found' | 'http' | 'timeout' | 'network';

/** Why a provider call gave no usable answer; every client returns these instead of throwing. */
export interface ProviderFailure {
  ok: false;
  kind: ProviderFailureKind;
  /** HTTP status when the provider answered. */
  status?: number;
  message: string;
  /** Provider error code from the error body (e.g. the card gateway's 147 = payment method failed). */
  code?: number | string;
  /** The card gateway's `transaction_error` on 4xx bodies, when present. */
  transactionError?: string;
  /** Known never to have left this process: its time to leave passed while it waited (request-limits.ts). */
  notSent?: boolean;
}

/**
 * Whether a failed call got no answer on the request itself: the provider could not be reached, timed out, failed
 * (5xx), asked for a pause (408, 429), or answered something that is not an answer. The same request may go again;
 * any other 4xx is the provider's refusal of it.
 */
export function unanswered(failure: ProviderFailure): boolean {
  const status = failure.status ?? (failure.kind === 'not_found' ? 404 : undefined);
  return status === undefined || status < 400 || status >= 500 || status === 408 || status === 429;
}

/** An answer from the provider, with its body parsed as JSON when it is JSON (else `json` is undefined). */
export type ProviderExchange = ({ ok: true; json: unknown } & ProviderResponse) | ProviderFailure;

/** One call whose body, if any, is already serialized; transport trouble comes back as a failure value. */
export async function exchange(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number, what: string): Promise<ProviderExchange> {
  let response: ProviderResponse;
  try {
    response = await providerRequest(method, url, headers, body, timeoutMs);
  } catch (error) {
    return transportFailure(error, what);
  }
  let json: unknown;
  try {
    json = JSON.parse(response.text);
  } catch {
    json = undefined;
  }
  return { ok: true, ...response, json };
}

/** providerRequest rejects with a TimeoutError on the deadline, else with a socket error carrying its code. */
function transportFailure(error: unknown, what: string): ProviderFailure {
  const name = error !== null && typeof error === 'object' && 'name' in error ? String(error.name) : '';
  if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, kind: 'timeout', message: `${what}: timed out` };
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : undefined;
  return { ok: false, kind: 'network', message: `${what}: ${code ?? (error instanceof Error ? error.message : String(error))}` };
}

async function providerRequest(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<ProviderResponse> {
  try {
    return await once(method, url, headers, body, timeoutMs);
  } catch (error) {
    const stale = (error as NodeJS.ErrnoException).code === 'ECONNRESET' && (error as { reusedSocket?: boolean }).reusedSocket;
    if (method === 'GET' && stale) return once(method, url, headers, body, timeoutMs);
    throw error;
  }
}

function once(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<ProviderResponse> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(target, {
      method,
      agent: agents[target.protocol as keyof typeof agents],
      headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', fail);
    });
    const timer = setTimeout(() => {
      const timeout = new Error(`${method} ${target.pathname}: timed out after ${timeoutMs} ms`);
      timeout.name = 'TimeoutError';
      request.destroy(timeout);
    }, timeoutMs);
    function fail(error: Error & { reusedSocket?: boolean }) {
      clearTimeout(timer);
      error.reusedSocket = request.reusedSocket;
      reject(error);
    }
    request.on('error', fail);
    request.end(body);
  });
}
