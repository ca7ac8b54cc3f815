import fs from 'node:fs';
import path from 'node:path';

/**
 * The helpdesk card's template (HTML and Liquid) that the operator pastes into Dixa (docs/helpdesk-card.md). Dixa
 * renders it itself: the service only ships the file, and `payment-hub helpdesk card-template` prints it.
 */

const FILE = 'card-template.liquid';

/**
 * The template file's absolute path. Beside this module when it runs from src/; the compiler does not copy the
 * file to dist/, so from dist/src/helpdesk-card/ it is the source tree's, three folders up (as the companion's
 * files are found from dist/).
 */
export function cardTemplatePath(): string {
  const beside = path.join(__dirname, FILE);
  if (fs.existsSync(beside)) return beside;
  return path.resolve(__dirname, '../../../src/helpdesk-card', FILE);
}

/** The template's text, exactly as the file holds it. */
export function readCardTemplate(): string {
  return fs.readFileSync(cardTemplatePath(), 'utf8');
}
