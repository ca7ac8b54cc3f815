import type { Request, Response } from 'restify';
import type { LookupCustomer } from '../../../customers/lookup-customer.use-case';
import { sendError, sendJson } from '../http-io';
import { query } from './staff-guard';

/** The longest email or phone the lookup reads (longer is 400 invalid_params). */
export const LOOKUP_VALUE_MAX_LENGTH = 320;

/**
 * GET /shop/v3/helpdesk/v1/list?email=... or ?phone=... (SPEC 4.2): exactly one of the two, once;
 * the customer record, or `{}` when nothing matches.
 */
export function customerLookupRoute(lookup: LookupCustomer) {
  return async (req: Request, res: Response): Promise<void> => {
    const params = query(req);
    const given = (['email', 'phone'] as const).filter((name) => params.getAll(name).some((value) => value.trim() !== ''));
    if (given.length !== 1) {
      return sendError(res, 400, 'invalid_params', 'Give exactly one of email or phone.', { params: ['email', 'phone'] });
    }
    const name = given[0];
    const values = params.getAll(name);
    if (values.length !== 1 || values[0].length > LOOKUP_VALUE_MAX_LENGTH) {
      return sendError(res, 400, 'invalid_params', `Give ${name} once, at most ${LOOKUP_VALUE_MAX_LENGTH} characters.`, { params: [name] });
    }
    const outcome = await lookup.execute(name === 'email' ? { email: values[0] } : { phone: values[0] });
    sendJson(res, 200, outcome.kind === 'found' ? outcome.customer : {});
  };
}
