import test from 'ava';
import { floodAndFault, vanishes } from '../support/network-fault-stage';

// The network to MariaDB fails without closing anything, as a pulled cable or a firewall dropping the flow
// does: pooled connections of the API and the worker go dead for good, and connections opened meanwhile
// hang at their greeting. The real `npm run api` and `npm run worker` must notice, open fresh connections once
// the link is back, and lose, double or hang nothing.

test('When MariaDB vanishes for 15 s, 10 s into a flood of card-gateway deliveries, Then no answer takes over 10 s, nothing is lost or doubled, every event is final within 60 s and lookups and /health are back within 10 s of recovery', async (t) => {
  await floodAndFault(t, 'net_mariadb_vanishes', vanishes('mariadb', 15_000));
});
