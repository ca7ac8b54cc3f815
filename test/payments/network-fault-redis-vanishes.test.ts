import test from 'ava';
import { floodAndFault, vanishes } from '../support/network-fault-stage';

// The network to Redis fails without closing anything: the API's and the worker's Redis connections (commands,
// throttle, queue) look healthy to their clients while no answer comes, and stay dead after the link is back.
// The real `npm run api` and `npm run worker` must notice, reconnect, and hold no request and no webhook.

test('When Redis vanishes for 15 s, 10 s into a flood of card-gateway deliveries, Then no answer takes over 10 s, nothing is lost or doubled, every event is final within 60 s and lookups and /health are back within 10 s of recovery', async (t) => {
  await floodAndFault(t, 'net_redis_vanishes', vanishes('redis', 15_000));
});
