import type { Response } from 'restify';
import type { LookupCustomer } from '../../../customers/lookup-customer.use-case';
import type { InputOf } from '../contract/route-contract';
import { sendJson } from '../http-io';
import type { customerLookupContract } from './helpdesk.contract';

/**
 * GET /shop/v3/helpdesk/v1/list?email=... or ?phone=... (SPEC 4.2): the customer record, or `{}` when nothing
 * matches. The contract has made sure exactly one of the two is given (an empty one counts as not given).
 */
export function customerLookupRoute(lookup: LookupCustomer) {
  return async ({ query }: InputOf<typeof customerLookupContract>, res: Response): Promise<void> => {
    const email = query.email?.trim() ? query.email : undefined;
    const outcome = await lookup.execute(email !== undefined ? { email } : { phone: query.phone! });
    sendJson(res, 200, outcome.kind === 'found' ? outcome.customer : {});
  };
}
