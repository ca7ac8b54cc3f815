import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'restify';
import { openApiDocument } from '../openapi/document';
import { sendText } from '../http-io';

/** The service's version, from its package.json (found upwards from here, in src/ and in dist/ alike). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return String(JSON.parse(fs.readFileSync(file, 'utf8')).version ?? '0.0.0');
  }
  return '0.0.0';
}

/** GET /openapi.json: the description of every route, built once. */
export function openApiRoute() {
  const text = JSON.stringify(openApiDocument(packageVersion()));
  return async (_req: Request, res: Response): Promise<void> => sendText(res, 200, text);
}
