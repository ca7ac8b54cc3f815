import http from 'node:http';
import https from 'node:https';

/**
 * One HTTP exchange with a provider over kept-alive connections (the worker talks to the same host
 * for every event; a new TLS connection per call would dominate). One deadline covers connect,
 * headers and body; it rejects with an error named `TimeoutError`. A GET on a kept-alive socket the
 * server had just closed is tried once more on a fresh one.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, scheduling: 'lifo' }),
};

export interface ProviderResponse {
  status: number;
  text: string;
}

export async function providerRequest(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<ProviderResponse> {
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
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
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
