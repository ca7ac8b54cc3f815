/**
 * Checking values against JSON Schemas (2020-12, the dialect of OpenAPI 3.1) compiled once, with ajv:
 * the schemas the routes declare, which the OpenAPI document serves as they are. ajv turns each schema
 * into a function once; a check is then a plain function call.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';

/**
 * The annotation that says how a fault inside a schema is answered, when not as a plain bad field: a code
 * (`missing_params`, `subscription_not_found`, ...). The faults of the innermost annotated schema take its code.
 */
export const REFUSAL_KEYWORD = 'x-refusal';

/** One field at fault: a top-level property of the checked object (`whole` when the value itself is at fault). */
export interface Fault {
  field: string;
  /** ajv's words for what is wrong, e.g. `must NOT have more than 320 characters`. */
  message: string;
  /** The annotation of the innermost annotated schema the fault was found in; none for a plain bad field. */
  refusal?: string;
  /** The rule in words: the description of that annotated schema, or of the rule across fields that failed. */
  rule?: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; faults: Fault[] };

export interface Shape<T> {
  /** The schema as declared: the one the OpenAPI document shows. */
  readonly schema: TSchema;
  /** Checks `value` (its text read as the schema's integers when the shape reads text, as query strings and paths are; see `readIntegers`). */
  check(value: unknown): Checked<T>;
}

function newAjv(fillDefaults: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // Unknown keywords are typos, so they stay errors; the types of keywords are the schema author's business.
    strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false,
    // Never ajv's coerceTypes: it takes `0x10`, ` 1`, `+1`, `1.0` and `1e3` as numbers, and `Infinity` or `1e309` as an
    // Infinity that its range keywords let through. Text is read by `readIntegers` instead.
    ...(fillDefaults ? { useDefaults: true } : {}),
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: REFUSAL_KEYWORD, schemaType: 'string' });
  return ajv;
}

// JSON bodies keep their types (a number is not a digit string); query strings and path segments are text, read as the schema's integers.
const bodies = newAjv(false);
const texts = newAjv(true);

/**
 * The one way a number is written in text: plain decimal digits, without a leading zero. A sign, spaces, a
 * fraction, an exponent, `0x`, `Infinity` or `007` stay text, which an `integer` schema refuses; no client
 * writes an ID or a page with a leading zero, and one spelling per number keeps what is logged and looked up the same.
 * Digits past what a number holds exactly are read all the same, and refused by the schema's `maximum` (past
 * 308 digits, Infinity, by its `integer`).
 */
const PLAIN_INTEGER = /^(?:0|[1-9][0-9]*)$/;

/**
 * Each top-level property of `value` that `schema` declares an integer, read from its text when that text is
 * a plain integer. Query strings and path segments declare integers and text only: no other type is read.
 */
function readIntegers(schema: TSchema, value: unknown): void {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  if (!properties || !value || typeof value !== 'object') return;
  const fields = value as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    const text = fields[name];
    if (property.type === 'integer' && typeof text === 'string' && PLAIN_INTEGER.test(text)) fields[name] = Number(text);
  }
}

/** Compiles `schema` once; `reads: 'text'` for values that arrive as text (query strings, path segments), whose integers are read in place. */
export function compileShape<S extends TSchema>(schema: S, reads: 'json' | 'text' = 'json'): Shape<Static<S>> {
  const validate = (reads === 'text' ? texts : bodies).compile(schema);
  const order = Object.keys((schema as { properties?: object }).properties ?? {});
  return {
    schema,
    check(value: unknown): Checked<Static<S>> {
      if (reads === 'text') readIntegers(schema, value);
      if (validate(value)) return { ok: true, value: value as Static<S> };
      return { ok: false, faults: faultsOf(schema, validate, order) };
    },
  };
}

/** The faults of a failed check, one per field and annotation, in the order the schema declares its properties. */
function faultsOf(schema: TSchema, validate: ValidateFunction, order: string[]): Fault[] {
  const found = new Map<string, Fault & { errors: number }>();
  for (const error of validate.errors ?? []) {
    const annotation = annotationAt(schema, error.schemaPath);
    const across = error.keyword === 'anyOf' || error.keyword === 'oneOf' ? acrossFields(schema, error) : null;
    // A rule across fields is said by its schema's description when it has one ("exactly one of email and phone").
    const rule = annotation.refusal ? annotation.rule : across?.rule;
    for (const field of across?.fields ?? [fieldOf(error)]) {
      const key = `${annotation.refusal ?? ''}\u0000${field}`;
      const known = found.get(key);
      if (known) {
        known.errors += 1;
        known.rule ??= rule;
      } else {
        found.set(key, { field, message: error.message ?? 'is not valid', refusal: annotation.refusal, rule, errors: 1 });
      }
    }
  }
  const rank = (field: string) => (field === 'whole' ? -1 : order.includes(field) ? order.indexOf(field) : order.length);
  return [...found.values()]
    .sort((a, b) => rank(a.field) - rank(b.field))
    // A field that failed several ways (each branch of an anyOf) has no one message that says it better than its schema.
    .map(({ errors, ...fault }) => (errors > 1 ? { ...fault, message: 'is not valid' } : fault));
}

/** The top-level field an error is about. */
function fieldOf(error: ErrorObject): string {
  if (error.instancePath) return decodePointerSegment(error.instancePath.split('/')[1]);
  if (error.keyword === 'required') return String((error.params as { missingProperty: string }).missingProperty);
  return 'whole';
}

/** A failed rule across fields (an anyOf or oneOf of the object): the fields its branches require, and its description. */
function acrossFields(schema: TSchema, error: ErrorObject): { fields: string[]; rule?: string } | null {
  if (error.instancePath) return null;
  const node = schemaAt(schema, error.schemaPath) as Record<string, unknown> | undefined;
  const branches = (node?.[error.keyword] as { required?: string[] }[] | undefined) ?? [];
  const fields = [...new Set(branches.flatMap((branch) => branch.required ?? []))];
  if (!fields.length) return null;
  return { fields, rule: typeof node?.description === 'string' ? node.description : undefined };
}

const decodePointerSegment = (segment: string) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');

/** The keys from the schema's root to the failed keyword, from ajv's schemaPath (`#/allOf/0/anyOf`). */
const schemaPathSegments = (schemaPath: string) => schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodePointerSegment);

/** The schema node a schemaPath (`#/allOf/0/anyOf`) names, without its last segment (the keyword that failed). */
function schemaAt(schema: TSchema, schemaPath: string): unknown {
  let node: unknown = schema;
  for (const segment of schemaPathSegments(schemaPath).slice(0, -1)) node = (node as Record<string, unknown> | undefined)?.[segment];
  return node;
}

/** The innermost refusal annotation on the way from the root to the failed keyword. */
function annotationAt(schema: TSchema, schemaPath: string): { refusal?: string; rule?: string } {
  let node: unknown = schema;
  let found: { refusal?: string; rule?: string } = {};
  for (const segment of [undefined, ...schemaPathSegments(schemaPath)]) {
    if (segment !== undefined) node = (node as Record<string, unknown> | undefined)?.[segment];
    if (!node || typeof node !== 'object') break;
    const annotated = node as Record<string, unknown>;
    if (typeof annotated[REFUSAL_KEYWORD] === 'string') {
      found = { refusal: annotated[REFUSAL_KEYWORD] as string, rule: typeof annotated.description === 'string' ? annotated.description : undefined };
    }
  }
  return found;
}
