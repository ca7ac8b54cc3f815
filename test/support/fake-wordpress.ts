import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { handOverKey, signHandOver } from '../../src/woocommerce-handover/handover-signature';
import type { TestShop } from './test-shop';

/** The site's LOGGED_IN_KEY and LOGGED_IN_SALT, which the service is given too. */
export const LOGGED_IN_KEY = 'handover-test-logged-in-key-0123456789';
export const LOGGED_IN_SALT = 'handover-test-logged-in-salt-9876543210';

export interface Received {
  ids: number[];
  verified: boolean;
  timestamp: number;
}

/**
 * WordPress with the companion plugin, as far as the hand-over sees it: a small HTTP(S) server that checks each
 * request's signature and age the way the companion does and then marks the changes applied (or answers as told).
 */
export class FakeWordPress {
  readonly received: Received[] = [];
  /** Answers for the next requests, in order, before it applies normally again. */
  readonly failures: number[] = [];
  /**
   * Requests whose changes are left `pending`, as the companion leaves a change whose order or subscription another
   * run is applying an earlier change of (woocommerce-changes.php): answered 200, nothing applied.
   */
  busyRequests = 0;
  private readonly server: http.Server;

  constructor(private readonly shop: TestShop, private readonly key = handOverKey(LOGGED_IN_KEY + LOGGED_IN_SALT), private readonly tls?: { certFile: string; keyFile: string }) {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.answer(req, res);
    this.server = tls ? https.createServer({ cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) }, handler) : http.createServer(handler);
  }

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const timestamp = Number(req.headers['x-shop-sidecar-timestamp']);
    const verified = req.method === 'POST' && req.url === '/?rest_route=/shop-sidecar/v1/apply'
      && req.headers['x-shop-sidecar-signature'] === signHandOver(this.key, timestamp, body)
      && Math.abs(Date.now() / 1000 - timestamp) <= 300;
    const ids = (JSON.parse(body) as { changes: number[] }).changes;
    this.received.push({ ids, verified, timestamp });
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (!verified) return reply(401, { code: 'shop_sidecar_unauthorized', message: 'bad signature' });
    const failure = this.failures.shift();
    if (failure) return reply(failure, { code: 'internal_server_error', message: 'WordPress is busy' });
    if (this.busyRequests > 0 && ids.length) {
      this.busyRequests -= 1;
      return reply(200, { version: 3, changes: ids.map((id) => ({ id, status: 'pending', result: 'waiting' })) });
    }
    if (ids.length) {
      await this.shop.db.query(`UPDATE ${this.shop.prefix}sidecar_woocommerce_changes SET status = 'applied', attempts = attempts + 1, result = 'applied by fake', applied_at = UTC_TIMESTAMP(3) WHERE id IN (?) AND status = 'pending'`, [ids]);
    }
    reply(200, { version: 3, changes: ids.map((id) => ({ id, status: 'applied', result: 'applied by fake' })) });
  }
}

