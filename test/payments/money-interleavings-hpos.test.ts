import { moneyInterleavings } from './money-interleavings-model';

// The money interleavings (test/payments/money-interleavings-model.ts) in HPOS, its own shop: `npm test` runs 200
// from the fixed seed; `npm run soak:money` runs MONEY_RUNS from a random one.
moneyInterleavings('money-interleavings-hpos.test.js', { hpos: true }, 200);
