import type { ExecutionContext } from 'ava';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Server } from 'restify';
import type { TestResponse } from './http-client';

const DOCUMENT_ID = 'https://shop-sidecar.invalid/openapi.json';

/** A JSON pointer into the document, as a URI fragment. */
const pointer = (...segments: string[]) => `${DOCUMENT_ID}#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

/** `/a/:id` (restify) as `/a/{id}` (OpenAPI). */
export const openApiPath = (restifyPath: string) => restifyPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every registered route of a restify server as `METHOD /openapi/{path}`. */
export function registeredOperations(server: Server): string[] {
  const routes = (server as unknown as { router: { getRoutes(): Record<string, { method: string; path: string }> } }).router.getRoutes();
  return Object.values(routes).map((route) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`).sort();
}

/**
 * The service's OpenAPI document, with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) to check
 * real requests and answers against the schemas it documents for them.
 */
export class ApiDescription {
  private readonly ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictNumbers: true, strictTypes: false, strictTuples: false, strictRequired: false });

  constructor(readonly document: any) {
    addFormats(this.ajv);
    // The document's own fields, so that strict mode takes its root as a schema holding the others.
    this.ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'servers', 'tags', 'paths', 'components', 'security', 'webhooks', 'externalDocs']);
    // The service's annotation of how a refusal is answered (x-refusal), an extension keyword OpenAPI 3.1 schemas may carry.
    this.ajv.addKeyword({ keyword: 'x-refusal', schemaType: 'string' });
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  operations(): string[] {
    const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
    return Object.entries(this.document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) => Object.keys(item).filter((key) => methods.includes(key)).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
  }

  private operation(method: string, path: string): any {
    return this.document.paths[path]?.[method.toLowerCase()];
  }

  private validate(ref: string, value: unknown): string | null {
    const validator = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    return validator(value) ? null : this.ajv.errorsText(validator.errors, { dataVar: 'body' });
  }

  /** Asserts the answer's status is documented for the operation and its JSON body matches the schema given for it. */
  checkResponse(t: ExecutionContext, method: string, path: string, res: TestResponse): void {
    const operation = this.operation(method, path);
    if (!operation) return void t.fail(`${method} ${path} is not documented`);
    const response = operation.responses[String(res.status)];
    if (!response) return void t.fail(`${method} ${path} answered ${res.status}, which is not documented: ${res.text}`);
    const contentType = String(res.headers['content-type'] ?? '');
    const documented = Object.keys(response.content ?? {});
    const mediaType = documented.find((type) => contentType.startsWith(type));
    t.truthy(mediaType, `${method} ${path} ${res.status} is ${contentType}, documented as ${documented.join(', ')}`);
    if (mediaType === 'application/json') {
      const problem = this.validate(pointer('paths', path, method.toLowerCase(), 'responses', String(res.status), 'content', 'application/json', 'schema'), res.json);
      t.is(problem, null, `${method} ${path} ${res.status}: ${res.text}`);
    }
    for (const name of Object.keys(response.headers ?? {})) {
      t.not(res.headers[name.toLowerCase()], undefined, `${method} ${path} ${res.status} without its documented ${name} header`);
    }
  }

  /** Asserts a body the route accepted matches the documented request body. */
  checkRequestBody(t: ExecutionContext, method: string, path: string, body: unknown): void {
    const problem = this.validate(pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'), body);
    t.is(problem, null, `${method} ${path} request body ${JSON.stringify(body)}`);
  }

  /** Whether the documented request body schema refuses `body`. */
  refusesRequestBody(method: string, path: string, body: unknown): boolean {
    return this.validate(pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'), body) !== null;
  }
}
