import type { Argv } from 'yargs';
import { readCardTemplate } from '../../../helpdesk-card/card-template';
import { action } from './runtime';

/**
 * `payment-hub helpdesk card-template`: the helpdesk card's template, exactly as the release ships it, to paste into
 * Dixa (docs/helpdesk-card.md). It only prints a file: no configuration, .env or database is read.
 */
export function helpdeskCommands(y: Argv): Argv {
  return y
    .command('card-template', "print the template of the helpdesk's custom card (HTML and Liquid) to paste into Dixa's Custom Cards; needs no configuration",
      (c) => c,
      action(async () => {
        process.stdout.write(readCardTemplate());
      }))
    .demandCommand(1, 'name a helpdesk command: card-template');
}
