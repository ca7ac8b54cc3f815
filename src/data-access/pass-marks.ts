import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { ReconcileState } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots, sqlNames } from './prepared-statement';
import { gmtDateTimeMs } from '../shop/shop-time';

/** Where a pass stands in a table it reads in the order of a change time: the last row's time (GMT) and ID. */
export interface PassMark {
  at: string;
  id: number;
}

/**
 * How far each periodic pass has looked through the table it follows (one row per pass, by name), so a restarted
 * worker goes on from there. A mark only moves forward: two workers may look at once.
 */
export class PassMarks {
  private readonly pool: Pool;
  private readonly read: PreparedStatement<'name'>;
  /** An upsert whose update is an expression, which the query builder cannot write. */
  private readonly advanceSql: string;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.read = PreparedStatement.from(dataSource.createQueryBuilder().select('s.value', 'value').from(ReconcileState, 's')
      .where('s.name = :name').setParameters(slots('name')));
    const { table, column: state } = sqlNames(dataSource, ReconcileState);
    this.advanceSql = `INSERT INTO ${table} (${state.name}, ${state.value}, ${state.updatedAt}) VALUES (?, ?, ?)
      ON DUPLICATE KEY UPDATE ${state.updatedAt} = IF(VALUES(${state.value}) > ${state.value}, VALUES(${state.updatedAt}), ${state.updatedAt}),
        ${state.value} = GREATEST(${state.value}, VALUES(${state.value}))`;
  }

  async get(name: string): Promise<PassMark | null> {
    const { sql, values } = this.read.with({ name });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    if (!rows.length) return null;
    const [at, id] = String(rows[0].value).split('|');
    return { at, id: Number(id) || 0 };
  }

  /** Moves the mark forward only; the caller writes only a mark that moved. */
  async advance(name: string, mark: PassMark, now: Date): Promise<void> {
    await this.pool.query(this.advanceSql, [name, `${mark.at}|${mark.id}`, gmtDateTimeMs(now)]);
  }
}
