import type { Request, Response } from 'restify';

/** The error body of every route: `{code, message, data: {status}}` plus any extra data. */
export function errorBody(status: number, code: string, message: string, data: Record<string, unknown> = {}) {
  return { code, message, data: { status, ...data } };
}

export function sendJson(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

export function sendText(res: Response, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: Response, status: number, code: string, message: string, data?: Record<string, unknown>, headers?: Record<string, string>): void {
  sendJson(res, status, errorBody(status, code, message, data), headers);
}

export type BodyOutcome = { ok: true; bytes: Buffer } | { ok: false; status: 413 };

/** Reads the exact request bytes (webhook signatures are over these), refusing bodies over the limit. */
export function readBody(req: Request, limitBytes: number): Promise<BodyOutcome> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      resolve({ ok: false, status: 413 });
    };
    req.on('data', onData);
    req.once('end', () => resolve({ ok: true, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
    req.once('error', reject);
  });
}

export type JsonObjectOutcome = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

export function parseJsonObject(bytes: Buffer): JsonObjectOutcome {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, message: 'The body is not valid JSON.' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'The body must be a JSON object.' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Query-string parameter names of the request. */
export function queryNames(req: Request): Set<string> {
  if (!req.url?.includes('?')) return new Set();
  const url = new URL(req.url, 'http://localhost');
  return new Set(url.searchParams.keys());
}
