import type { Request, Response } from 'restify';
import { malformedFields } from '../../shared/unicode-text';
import { within } from '../../shared/within';

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

/** A refusal as the service answers it: a contract's, or a body that is not a JSON object. */
export interface ErrorAnswer {
  status: number;
  code: string;
  message: string;
  data: Record<string, unknown>;
}

export function sendRefusal(res: Response, refusal: ErrorAnswer): void {
  sendError(res, refusal.status, refusal.code, refusal.message, refusal.data);
}

export const PAYLOAD_TOO_LARGE: ErrorAnswer = { status: 413, code: 'payload_too_large', message: 'The body is too large.', data: {} };

export function sendError(res: Response, status: number, code: string, message: string, data?: Record<string, unknown>, headers?: Record<string, string>): void {
  sendJson(res, status, errorBody(status, code, message, data), headers);
}

/**
 * The longest a request waits on the database or Redis before it is answered 503 with Retry-After: under
 * the providers' 10 s webhook timeout and the helpdesk's, however the connections behind it fail (each of
 * their waits has a bound of its own too, see connection-pool.ts and redis.ts; this one holds for their sum).
 */
export const ANSWER_DEADLINE_MS = 4500;

/**
 * `work`'s outcome, or `late` once the request has waited ANSWER_DEADLINE_MS since `arrived` (performance.now()), or
 * when a bound inside the work passed. A timer of its own for each (one timer watching a set of the answers awaited
 * cost less still at one connection, but a set whose entries come and go this fast kept each request's objects alive
 * through the young-generation collections at ten: their pauses doubled).
 */
export function answerInTime<T, L>(work: Promise<T>, arrived: number, late: L): Promise<T | L> {
  return within(work, Math.max(0, arrived + ANSWER_DEADLINE_MS - performance.now()), late);
}

/** An attempt the failed-attempt limit refuses: 503 while Redis cannot count it, 429 with Retry-After while blocked. */
export function sendAttemptRefusal(res: Response, refusal: { kind: 'unavailable' } | { kind: 'blocked'; retryAfterSeconds: number }): void {
  if (refusal.kind === 'unavailable') {
    return sendError(res, 503, 'service_unavailable', 'The service cannot check attempt limits right now; try again shortly.', {}, { 'Retry-After': '5' });
  }
  sendError(res, 429, 'rate_limited', 'Too many failed attempts; try again later.', {}, { 'Retry-After': String(refusal.retryAfterSeconds) });
}

/**
 * The client behind a request, as the failed-attempt limit waits for it: there while its connection is (the
 * request itself counts as destroyed once its body has been read). A class, not an object literal with a getter:
 * V8 gave each such literal a hidden class of its own, in the old generation, which after the answer still held the
 * getter and through it the request; every young-generation collection then copied and promoted each request's
 * objects, pausing 2-4 ms instead of under one (bench/results/order-status-pool-query-2026-11-29.md).
 */
export class RequestClient {
  constructor(private readonly req: Request) {}

  get destroyed(): boolean {
    return this.req.socket?.destroyed !== false;
  }
}

export type BodyOutcome = { ok: true; bytes: Buffer } | { ok: false; reason: 'too_large' } | { ok: false; reason: 'client_gone' };

const TOO_LARGE: BodyOutcome = { ok: false, reason: 'too_large' };
const CLIENT_GONE: BodyOutcome = { ok: false, reason: 'client_gone' };

/**
 * Reads the exact request bytes (webhook signatures are over these), refusing bodies over the limit.
 * A client that goes away before the body's end (a reset, a close, a half-close, at any byte) makes it
 * `client_gone`: nobody is there to answer, but whatever the route holds must still be let go.
 */
export function readBody(req: Request, limitBytes: number): Promise<BodyOutcome> {
  // A request destroyed before anyone listened has already sent its `close`, and will send nothing more.
  if (req.destroyed) return Promise.resolve(CLIENT_GONE);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: BodyOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      settle(TOO_LARGE);
    };
    req.on('data', onData);
    req.once('end', () => settle({ ok: true, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
    // `close` comes after `end` when the body was whole, so it only settles a body that was not.
    req.once('close', () => settle(CLIENT_GONE));
    req.once('error', () => settle(CLIENT_GONE));
  });
}

export type JsonObjectOutcome = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; params: string[] };

export type JsonObjectBody =
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'refused'; refusal: ErrorAnswer }
  /** The client went away before the body's end: there is nobody to answer. */
  | { kind: 'gone' };

/** The request's JSON object body, read up to `limitBytes` (413 beyond); an empty body is `{}`. */
export async function readJsonObject(req: Request, limitBytes: number): Promise<JsonObjectBody> {
  const read = await readBody(req, limitBytes);
  if (!read.ok) return read.reason === 'client_gone' ? { kind: 'gone' } : { kind: 'refused', refusal: PAYLOAD_TOO_LARGE };
  if (!read.bytes.length) return { kind: 'json', value: {} };
  const json = parseJsonObject(read.bytes);
  return json.ok ? { kind: 'json', value: json.value } : { kind: 'refused', refusal: { status: 400, code: 'invalid_params', message: json.message, data: { params: json.params } } };
}

/** A JSON object body; refused when it is not one, or when any text in it is not well-formed Unicode (a lone surrogate). */
export function parseJsonObject(bytes: Buffer): JsonObjectOutcome {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, message: 'The body is not valid JSON.', params: ['body'] };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'The body must be a JSON object.', params: ['body'] };
  const malformed = malformedFields(value as Record<string, unknown>);
  if (malformed.length) return { ok: false, message: `Not valid Unicode text (a lone surrogate): ${malformed.join(', ')}.`, params: malformed };
  return { ok: true, value: value as Record<string, unknown> };
}
