import type { Request, Response } from 'restify';
import { databaseUnavailable } from '../../../data-access/connection-pool';
import type { ActionConfirmation, ActionForm, ActionResult, CardActions, OpenedLink } from '../../../helpdesk-card/card-actions.use-case';
import { cardWords, type CardWords } from '../../../helpdesk-card/card-words';
import type { NoteLanguage } from '../../../shop/order-note-words';
import { readBody } from '../http-io';
import { CARD_TOKEN_MAX_LENGTH } from './helpdesk-card.contract';

/** The confirmation form's body is a date or a few reason IDs. */
const FORM_LIMIT_BYTES = 4096;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * A page of its own, nothing from elsewhere: no script, no external resource, never framed by another site, never
 * cached, and no referrer (the address holds the link's token).
 */
function sendPage(res: Response, status: number, language: NoteLanguage, title: string, body: string): void {
  const html = `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<title>${escape(title)}</title><style>body{font:15px/1.45 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1d2327}`
    + 'h1{font-size:1.25rem}label{display:block;margin:.8rem 0 .3rem}button{font:inherit;padding:.45rem 1rem;margin-top:1rem;background:#2271b1;color:#fff;border:0;border-radius:3px;cursor:pointer}'
    + '.refused{color:#b32d2e}</style></head>'
    + `<body><h1>${escape(title)}</h1>${body}</body></html>`;
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(html)),
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  });
  res.end(html);
}

const REFUSAL_STATUS = { altered: 403, not_staff: 403, expired: 410, used: 410, gone: 404, unavailable: 503 } as const;

function refusalText(words: CardWords, kind: keyof typeof REFUSAL_STATUS): string {
  const page = words.page;
  return { altered: page.altered, not_staff: page.notStaff, expired: page.expired, used: page.used, gone: page.altered, unavailable: page.unavailable }[kind];
}

function confirmationPage(res: Response, page: ActionConfirmation, status = 200, problem?: string): void {
  const words = cardWords(page.language);
  const action = words.action(page.action);
  let fields = '';
  if (page.action === 'pause') {
    fields = `<label for="end_date">${escape(words.page.pauseUntil)}</label><input type="date" id="end_date" name="end_date" required>`;
  } else if (page.action === 'cancellation_reason') {
    fields = `<fieldset><legend>${escape(words.page.reasons)}</legend>${page.reasons.map((reason) => `<label><input type="checkbox" name="reason_post_ids" value="${reason.id}"> ${escape(reason.title)}</label>`).join('')}</fieldset>`;
  }
  const warning = problem ? `<p class="refused">${escape(words.page.refused)}: ${escape(problem)}</p>` : '';
  sendPage(res, status, page.language, words.page.confirmTitle(action, page.subscriptionId),
    `${warning}<form method="post">${fields}<button type="submit">${escape(words.page.confirm)}</button></form>`);
}

function resultPage(res: Response, result: ActionResult | OpenedLink): void {
  if (result.kind === 'confirm') return confirmationPage(res, result);
  if (result.kind === 'invalid') return confirmationPage(res, result.page, 400, result.message);
  const words = cardWords(result.language);
  if (result.kind === 'done') {
    const action = words.action(result.action);
    return sendPage(res, 200, result.language, action, `<p>${escape(words.page.done(action, result.subscriptionId))}</p>`);
  }
  if (result.kind === 'not_allowed') return sendPage(res, 409, result.language, words.page.refused, `<p class="refused">${escape(result.message)}</p>`);
  sendPage(res, REFUSAL_STATUS[result.kind], result.language, words.page.refused, `<p class="refused">${escape(refusalText(words, result.kind))}</p>`);
}

/** The form's fields, as a browser sends them (`application/x-www-form-urlencoded`). */
function formOf(bytes: Buffer): ActionForm {
  const params = new URLSearchParams(bytes.toString('utf8'));
  const endDate = params.get('end_date');
  return { ...(endDate !== null ? { end_date: endDate.trim() } : {}), reason_post_ids: params.getAll('reason_post_ids') };
}

/** What a link's handler does when the database is away: the service's page saying so, nothing done. */
async function orUnavailable<T extends ActionResult | OpenedLink>(work: Promise<T>, language: () => NoteLanguage): Promise<T | ActionResult> {
  try {
    return await work;
  } catch (error) {
    if (databaseUnavailable(error)) return { kind: 'unavailable', language: language() };
    throw error;
  }
}

/**
 * GET and POST /helpdesk/v1/card/actions/:token: the link itself is the credential (signed, bound, used once, for
 * minutes). The GET never changes anything, so a link a browser or a mail scanner opens ahead of the agent is not spent.
 */
export function helpdeskCardActionRoutes(actions: CardActions, fallbackLanguage: () => NoteLanguage) {
  const tokenOf = (req: Request) => String((req.params as Record<string, unknown>).token ?? '').slice(0, CARD_TOKEN_MAX_LENGTH + 1);
  return {
    async page(req: Request, res: Response): Promise<void> {
      resultPage(res, await orUnavailable(actions.open(tokenOf(req)), fallbackLanguage));
    },
    async act(req: Request, res: Response): Promise<void> {
      const body = await readBody(req, FORM_LIMIT_BYTES);
      if (!body.ok) {
        if (body.reason === 'client_gone') return;
        return sendPage(res, 413, fallbackLanguage(), cardWords(fallbackLanguage()).page.refused, '<p class="refused">413</p>');
      }
      resultPage(res, await orUnavailable(actions.perform(tokenOf(req), formOf(body.bytes)), fallbackLanguage));
    },
  };
}
