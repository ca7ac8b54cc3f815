import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { MobileWalletRegistration } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots } from './prepared-statement';
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
  private readonly insertRegistration: PreparedStatement<'registrationId' | 'url' | 'events' | 'secret'>;
  private readonly newestFirst: PreparedStatement<never>;
  private readonly registrations: RecentlyRead<WalletRegistration[]>;

  constructor(dataSource: DataSource, maxAgeMs = 5000) {
    this.pool = rawPool(dataSource);
    const s = slots('registrationId', 'url', 'events', 'secret');
    this.insertRegistration = PreparedStatement.from(dataSource.createQueryBuilder().insert().into(MobileWalletRegistration)
      .values({ registrationId: s.registrationId, url: s.url, events: s.events, secret: s.secret, createdAt: () => 'NOW(3)' } as object));
    this.newestFirst = PreparedStatement.from(dataSource.createQueryBuilder().select('r.registrationId', 'registrationId').addSelect('r.url', 'url')
      .addSelect('r.events', 'events').addSelect('r.secret', 'secret').addSelect('r.createdAt', 'createdAt')
      .from(MobileWalletRegistration, 'r').orderBy('r.id', 'DESC'));
    this.registrations = new RecentlyRead(() => this.read(), maxAgeMs);
  }

  async add(registration: Omit<WalletRegistration, 'createdAt'>): Promise<void> {
    const { sql, values } = this.insertRegistration.with({ ...registration, events: JSON.stringify(registration.events) });
    await this.pool.query(sql, values);
    this.registrations.forget();
  }

  /** Every stored registration, newest first; re-read at most every few seconds. */
  all(): Promise<WalletRegistration[]> {
    return this.registrations.get();
  }

  private async read(): Promise<WalletRegistration[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.newestFirst.sql);
    return rows.map((row) => ({ registrationId: row.registrationId, url: row.url, events: JSON.parse(row.events), secret: row.secret, createdAt: row.createdAt }));
  }
}
