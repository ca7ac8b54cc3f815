/**
 * A route's contract, written once: its method and path, its path parameters, query string and body as
 * JSON Schemas (TypeBox, so each is also the handler's TypeScript type), and what it answers. From it come
 * the request's checks (compiled when the server starts), the handler's typed input, the route restify
 * registers and the route's part of the OpenAPI document. docs/developers-guide.md, "Adding a route".
 */
import type { Request, Server } from 'restify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { compileShape, REFUSAL_KEYWORD, type Fault, type Shape } from '../../../shared/json-schema';
import { readJsonObject, type ErrorAnswer } from '../http-io';

export type HttpMethod = 'get' | 'post' | 'delete';

/** The OpenAPI operation's own words: everything but the parameters and the body, which come from the schemas. */
export interface OperationDoc {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

export interface RouteDefinition<P extends Record<string, TSchema>, Q extends TObject | undefined, B extends TSchema | undefined> {
  method: HttpMethod;
  /** As OpenAPI writes it: `/subscription/{subscriptionId}/pause`. */
  path: string;
  /** Each `{name}` of the path. Path segments are text; an integer schema reads digits as the number. */
  params?: P;
  /** The query string as one object (repeated names are lists); its values are text, read as the schema's types. */
  query?: Q;
  /** The JSON body; `required: false` lets an empty body through as `{}`. */
  body?: { schema: B; required: boolean; description?: string };
  operation: OperationDoc;
}

type ParamsOf<P> = { [K in keyof P]: P[K] extends TSchema ? Static<P[K]> : never };
type QueryOf<Q> = Q extends TObject ? Static<Q> : Record<string, never>;
type BodyOf<B> = B extends TSchema ? Static<B> : Record<string, never>;

/** What a checked request gives its handler. */
export interface RouteInput<P = Record<string, never>, Q = Record<string, never>, B = Record<string, never>> {
  params: P;
  query: Q;
  body: B;
}

/** A request the contract refuses: the service's error answer. */
export type Refusal = ErrorAnswer;

export type Checked<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

/**
 * The answers of the refusals a schema annotates (`x-refusal`), besides `invalid_params`. A not-found code's
 * message is also what its handler answers when the shop has no such thing: one wording for both.
 */
export const REFUSALS = {
  missing_params: { status: 400, namesFields: false },
  params_must_be_in_body: { status: 400, namesFields: true },
  subscription_not_found: { status: 404, message: 'No subscription with that ID.', namesFields: false },
  cancellation_reason_not_found: { status: 404, message: 'This subscription has no recorded cancellation reason with that ID.', namesFields: false },
  discount_not_found: { status: 404, message: 'No discount with that ID.', namesFields: false },
  order_not_found: { status: 404, message: 'No order with that ID.', namesFields: false },
  unknown_provider: { status: 404, message: 'Not one of the payment providers.', namesFields: false },
} satisfies Record<string, { status: number; message?: string; namesFields: boolean }>;

/** The refusals that answer a thing the shop does not have, each with its message. */
export type NotFoundCode = { [C in keyof typeof REFUSALS]: (typeof REFUSALS)[C] extends { message: string } ? C : never }[keyof typeof REFUSALS];

/** A not-found refusal as its handler answers it when the shop has no such thing: the same answer as a path that cannot name one. */
export function notFound(code: NotFoundCode): Refusal {
  const { status, message } = REFUSALS[code];
  return { status, code, message, data: {} };
}

/**
 * The answer to a failed check. Plain bad fields come first (400 `invalid_params`, `data.params` naming each,
 * in the order the schema declares them); only when there is none does an annotated rule answer, with its
 * code and, for a rule in words, its schema's description as the message.
 */
export function refusalOf(found: Fault[], whole: string): Refusal {
  const faults = found.map((fault) => (fault.field === 'whole' ? { ...fault, field: whole } : fault));
  const plain = faults.filter((fault) => !fault.refusal);
  if (plain.length) {
    return {
      status: 400,
      code: 'invalid_params',
      message: invalidMessage(plain),
      data: { params: [...new Set(plain.map((fault) => fault.field))] },
    };
  }
  const code = faults[0].refusal!;
  const known: { status: number; message?: string; namesFields: boolean } = (REFUSALS as Record<string, typeof known>)[code] ?? { status: 400, namesFields: true };
  const fields = [...new Set(faults.filter((fault) => fault.refusal === code).map((fault) => fault.field))];
  return {
    status: known.status,
    code,
    message: known.message ?? faults[0].rule ?? `Refused: ${fields.join(', ')}.`,
    data: known.namesFields ? { params: fields } : {},
  };
}

/** Each bad field in ajv's words, or the rule across fields that failed in its schema's (then without the generic opening). */
function invalidMessage(faults: Fault[]): string {
  const parts = [...new Set(faults.map((fault) => (fault.rule ?? `${fault.field} ${fault.message}`).replace(/\.$/, '')))];
  const text = `${parts.join('; ')}.`;
  return faults.every((fault) => fault.rule) ? text : `Invalid parameter(s): ${text}`;
}

/** A route's contract with its checks compiled. */
export interface RouteContract<P = Record<string, never>, Q = Record<string, never>, B = Record<string, never>> {
  readonly definition: RouteDefinition<Record<string, TSchema>, TObject | undefined, TSchema | undefined>;
  /** The schemas the checks were compiled from, as the document shows them. */
  readonly shapes: { params: Record<string, Segment>; query?: Shape<unknown>; body?: Shape<unknown> };
  checkParams(raw: Record<string, unknown> | undefined): Checked<P>;
  checkQuery(url: string | undefined): Checked<Q>;
  checkBody(json: Record<string, unknown>): Checked<B>;
  /** The path as restify routes it: `/subscription/:subscriptionId/pause`. */
  readonly routerPath: string;
}

export type InputOf<C> = C extends RouteContract<infer P, infer Q, infer B> ? RouteInput<P, Q, B> : never;

/** The query string as an object: a name given once is its text, a name given more often the list of its texts. */
export function queryObject(url: string | undefined): Record<string, string | string[]> {
  // No prototype: a parameter named `__proto__` is a parameter like any other.
  const object: Record<string, string | string[]> = Object.create(null);
  const at = url?.indexOf('?') ?? -1;
  if (at < 0) return object;
  for (const [name, value] of new URLSearchParams(url!.slice(at + 1))) {
    const before = object[name];
    object[name] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  return object;
}

const EMPTY = Object.freeze({}) as Record<string, never>;

/** Declares a route; its checks are compiled here, once, as the server's modules load. */
export function defineRoute<P extends Record<string, TSchema> = Record<string, never>, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  definition: RouteDefinition<P, Q, B>,
): RouteContract<ParamsOf<P>, QueryOf<Q>, BodyOf<B>> {
  const params = Object.fromEntries(Object.entries(definition.params ?? {}).map(([name, schema]) => [name, compileSegment(schema)]));
  const query = definition.query ? compileShape(definition.query, 'text') : undefined;
  const body = definition.body ? compileShape(definition.body.schema as TSchema, 'json') : undefined;
  return {
    definition: definition as RouteContract['definition'],
    shapes: { params, query, body },
    routerPath: definition.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'),

    checkParams(raw) {
      const value: Record<string, unknown> = {};
      for (const [name, shape] of Object.entries(params)) {
        // Each segment alone, so that a refusal names the segment at fault; a number read from its text is written into the holder.
        const holder = { value: raw?.[name] };
        const checked = shape.holder.check(holder);
        if (!checked.ok) return { ok: false, refusal: refusalOf(checked.faults.map((fault) => ({ ...fault, field: name })), name) };
        value[name] = holder.value;
      }
      return { ok: true, value: value as ParamsOf<P> };
    },

    checkQuery(url) {
      if (!query) return { ok: true, value: EMPTY as QueryOf<Q> };
      const object = queryObject(url);
      const checked = query.check(object);
      return checked.ok ? { ok: true, value: checked.value as QueryOf<Q> } : { ok: false, refusal: refusalOf(checked.faults, 'query') };
    },

    checkBody(json) {
      if (!body) return { ok: true, value: EMPTY as BodyOf<B> };
      const checked = body.check(json);
      return checked.ok ? { ok: true, value: checked.value as BodyOf<B> } : { ok: false, refusal: refusalOf(checked.faults, 'body') };
    },
  };
}

/** A path segment's check. Text is read as a number only as an object's property, so each segment is checked in one. */
interface Segment {
  readonly schema: TSchema;
  readonly holder: Shape<{ value: unknown }>;
}

function compileSegment(schema: TSchema): Segment {
  // The segment's annotation holds for its absence too.
  const refusal = (schema as Record<string, unknown>)[REFUSAL_KEYWORD];
  const holder = compileShape({
    type: 'object', required: ['value'], properties: { value: schema }, ...(refusal ? { [REFUSAL_KEYWORD]: refusal } : {}),
  } as unknown as TSchema, 'text') as Shape<{ value: unknown }>;
  return { schema, holder };
}

/** A request checked against its route's contract; `gone` when the client went away before its body's end (nobody to answer). */
export type CheckedRequest<C> = { kind: 'input'; input: InputOf<C> } | { kind: 'refused'; refusal: Refusal } | { kind: 'gone' };

/**
 * The request's path, query string and body checked against the contract, in that order (an ID in the path that
 * cannot be is answered before what the body says). The body is read, up to `bodyLimitBytes`, only when the
 * route takes one; an empty body is `{}`.
 */
export async function checkRequest<C extends RouteContract<any, any, any>>(req: Request, contract: C, bodyLimitBytes: number): Promise<CheckedRequest<C>> {
  const params = contract.checkParams(req.params);
  if (!params.ok) return { kind: 'refused', refusal: params.refusal };
  const query = contract.checkQuery(req.url);
  if (!query.ok) return { kind: 'refused', refusal: query.refusal };
  let body: Checked<unknown> = { ok: true, value: EMPTY };
  if (contract.definition.body) {
    const json = await readJsonObject(req, bodyLimitBytes);
    if (json.kind !== 'json') return json.kind === 'gone' ? json : { kind: 'refused', refusal: json.refusal };
    body = contract.checkBody(json.value);
    if (!body.ok) return { kind: 'refused', refusal: body.refusal };
  }
  return { kind: 'input', input: { params: params.value, query: query.value, body: body.value } as InputOf<C> };
}

/** Registers `handler` at the contract's method and path. */
export function register(server: Server, contract: RouteContract<any, any, any>, handler: (req: any, res: any) => Promise<void>): void {
  const { method } = contract.definition;
  if (method === 'get') server.get(contract.routerPath, handler);
  else if (method === 'post') server.post(contract.routerPath, handler);
  else server.del(contract.routerPath, handler);
}
