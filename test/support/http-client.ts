import http from 'node:http';
import https from 'node:https';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface TestRequest {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** The whole exchange must end within this, else the request is given up and fails: a hang shows as a failure, not a stuck test. */
  timeoutMs?: number;
}

/** A plain HTTP(S) client for tests: any status is an answer, and self-signed certificates are accepted. */
export function request(baseUrl: string, method: string, path: string, options: TestRequest = {}): Promise<TestResponse> {
  const url = new URL(path, baseUrl);
  const body = options.body === undefined ? undefined
    : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body
      : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...(body !== undefined && typeof options.body === 'object' && !Buffer.isBuffer(options.body) ? { 'content-type': 'application/json' } : {}), ...options.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      // Given up halfway through the answer's body.
      if (options.timeoutMs !== undefined) res.on('error', reject);
    });
    req.on('error', reject);
    if (options.timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(new Error(`no whole answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** `n` copies of one request sent at once, each on a connection of its own; how many got each status. */
export async function simultaneous(baseUrl: string, n: number, method: string, path: string, options: TestRequest = {}): Promise<Record<number, number>> {
  const agent = new http.Agent({ maxSockets: n });
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...options.headers };
  try {
    const statuses = await Promise.all(Array.from({ length: n }, () => new Promise<number>((resolve, reject) => {
      const req = http.request(new URL(path, baseUrl), { method, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    })));
    return statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});
  } finally {
    agent.destroy();
  }
}
