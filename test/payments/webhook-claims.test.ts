import test from 'ava';
import sinon from 'sinon';
import type { DataSource } from 'typeorm';
import type { RowDataPacket } from 'mysql2/promise';
import { createShopDataSource } from '../../src/data-access/data-source';
import { WebhookRepository } from '../../src/data-access/webhook-repository';
import { createTestShop, type TestShop } from '../support/test-shop';

let shop: TestShop;
const sources: DataSource[] = [];

test.before(async () => {
  shop = await createTestShop('webhook_claims');
});

test.after.always(async () => {
  await Promise.all(sources.map((source) => source.destroy()));
  await shop?.drop();
});

/** A repository on a pool of its own, as each worker process has. */
async function worker(): Promise<WebhookRepository> {
  const source = createShopDataSource(shop.config().db, 4);
  await source.initialize();
  sources.push(source);
  return new WebhookRepository(source);
}

async function storePending(webhooks: WebhookRepository, count: number, tag: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const stored = await webhooks.insertPending('card_gateway', `${tag}-${i}`, 'invoice_settled', Buffer.from('{}'));
    if (stored.kind === 'stored') ids.push(stored.id);
  }
  return ids;
}

const attemptsOf = async (ids: number[]) =>
  ((await shop.db.query<RowDataPacket[]>(`SELECT id, attempts FROM ${shop.prefix}sidecar_webhooks WHERE id IN (?) ORDER BY id`, [ids]))[0]).map((row) => Number(row.attempts));

test.serial('Claims made together are taken in one go; each webhook goes to one asker, the first, and counts one attempt', async (t) => {
  const webhooks = await worker();
  const [a, b, c] = await storePending(webhooks, 3, 'together');
  const statements = sinon.spy(webhooks.pool, 'query');
  const claimed = await Promise.all([webhooks.claim(a), webhooks.claim(b), webhooks.claim(a), webhooks.claim(c + 1000)]);
  statements.restore();

  t.is(statements.callCount, 1, 'one round trip for the four claims');
  t.deepEqual(claimed.map((webhook) => webhook?.id ?? null), [a, b, null, null], 'the second ask for a, and an unknown id, get nothing');
  t.is(claimed[0]?.status, 'PENDING');
  t.is(claimed[0]?.attempts, 1);
  t.deepEqual(await attemptsOf([a, b, c]), [1, 1, 0]);
  t.is(await webhooks.claim(a), null, 'held by the first attempt');
  t.is((await webhooks.claim(c))?.id, c);
});

test.serial('When two workers claim the same 60 webhooks at once, each is taken exactly once between them', async (t) => {
  const [first, second] = [await worker(), await worker()];
  const ids = await storePending(first, 60, 'race');
  const claimsOf = (webhooks: WebhookRepository) => Promise.all(ids.map((id) => webhooks.claim(id)));
  const [byFirst, bySecond] = await Promise.all([claimsOf(first), claimsOf(second)]);

  const takers = ids.map((_, i) => Number(Boolean(byFirst[i])) + Number(Boolean(bySecond[i])));
  t.deepEqual(takers, ids.map(() => 1));
  t.deepEqual(await attemptsOf(ids), ids.map(() => 1));
});

test.serial('More claims in one turn than one statement takes are split, and every one is answered', async (t) => {
  const webhooks = await worker();
  const ids = await storePending(webhooks, 250, 'many');
  const claimed = await Promise.all(ids.map((id) => webhooks.claim(id)));
  t.deepEqual(claimed.map((webhook) => webhook?.id), ids);
});
