import test from 'ava';
import { floodAndFault, slowedDown } from '../support/network-fault-stage';

// The network to MariaDB turns slow: every byte the API and the worker send arrives 400 ms late, so each
// statement takes at least that long and the pools cannot keep up with the flood. Nothing breaks, so
// nothing tells the service; it must still answer every request in bounded time and catch up after.

test('When every byte to MariaDB is 400 ms late for 20 s, 10 s into a flood of card-gateway deliveries, Then no answer takes over 10 s, nothing is lost or doubled, every event is final within 60 s and lookups and /health are back within 10 s of recovery', async (t) => {
  await floodAndFault(t, 'net_mariadb_slow', slowedDown('mariadb', 400, 20_000));
});
