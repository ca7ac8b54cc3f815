import { moneyInterleavings } from './money-interleavings-model';

// The money interleavings (test/payments/money-interleavings-model.ts) in posts storage: `npm test` runs 200 from
// the fixed seed; `npm run soak:money` runs MONEY_RUNS from a random one.
moneyInterleavings('money-interleavings.test.js', { hpos: false }, 200);
