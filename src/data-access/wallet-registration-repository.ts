import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { MobileWalletRegistration } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { RecentlyRead } from './recently-read';

export interface WalletRegistration {
  registrationId: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: string;
}

/** Webhook registrations made with the mobile wallet, with the secret it returned (it is shown only once). */
export class WalletRegistrationRepository {
  private readonly pool: Pool;
  private readonly table: string;
  private readonly registrations: RecentlyRead<WalletRegistration[]>;

  constructor(dataSource: DataSource, maxAgeMs = 5000) {
    this.pool = rawPool(dataSource);
    this.table = tableOf(dataSource, MobileWalletRegistration);
    this.registrations = new RecentlyRead(() => this.read(), maxAgeMs);
  }

  async add(registration: Omit<WalletRegistration, 'createdAt'>): Promise<void> {
    await this.pool.query(`INSERT INTO ${this.table} (registration_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, NOW(3))`,
      [registration.registrationId, registration.url, JSON.stringify(registration.events), registration.secret]);
    this.registrations.forget();
  }

  /** Every stored registration, newest first; re-read at most every few seconds. */
  all(): Promise<WalletRegistration[]> {
    return this.registrations.get();
  }

  private async read(): Promise<WalletRegistration[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.table} ORDER BY id DESC`);
    return rows.map((row) => ({
      registrationId: row.registration_id, url: row.url, events: JSON.parse(row.events), secret: row.secret, createdAt: row.created_at,
    }));
  }
}
