import type { DataSource, EntityTarget, ObjectLiteral, QueryBuilder, SelectQueryBuilder } from 'typeorm';
import { together, type Statement } from './transaction';

/**
 * A statement TypeORM's query builder wrote once, at start-up, from the entities: the table with the
 * site's prefix and every column come from the entity's metadata, so no repository names them. Each use
 * only binds its values, and the statement runs through whatever connection holds the work (a
 * transaction's, or the pool), alone or `together()` with others in one round trip.
 *
 * The builder is given a named slot for each value (`slots('ids', 'email')`), written `:ids` in its
 * conditions. `IN (:ids)` takes an array: mysql2 expands it when the statement runs, so one prepared
 * text serves lists of any length.
 */
export class PreparedStatement<Name extends string = string> {
  private constructor(readonly sql: string, private readonly order: (Slot | { fixed: unknown })[]) {}

  static from<Name extends string>(builder: QueryBuilder<ObjectLiteral>): PreparedStatement<Name> {
    const [sql, parameters] = builder.getQueryAndParameters();
    return new PreparedStatement<Name>(sql, parameters.map((value) => (value instanceof Slot ? value : { fixed: value })));
  }

  /** The statement with its values, in the order the builder wrote the slots. */
  with(values: Record<Name, unknown>): Statement {
    return { sql: this.sql, values: this.order.map((slot) => (slot instanceof Slot ? values[slot.name as Name] : slot.fixed)) };
  }
}

/** A statement written once that each use binds by name: a `PreparedStatement`, or one composed with `sqlNames`. */
export interface Bindable<Name extends string> {
  readonly sql: string;
  with(values: Record<Name, unknown>): Statement;
}

/**
 * Statements always sent together in one round trip, as `together()` sends them, but with their text
 * joined once rather than on every use; each use binds every one by name.
 */
export function inOneRoundTrip<Name extends string>(...statements: Bindable<Name>[]): Bindable<Name> {
  const { sql } = together(statements.map((statement) => ({ sql: statement.sql, values: [] })));
  return {
    sql,
    with: (values) => {
      // A loop, not flatMap: this runs for every order status lookup, and V8's flatMap is the slower of the two.
      const bound: unknown[] = [];
      for (const statement of statements) for (const value of statement.with(values).values) bound.push(value);
      return { sql, values: bound };
    },
  };
}

/** A query of `entity` as `alias` with every column selected under its property's name: rows shaped as the entity. */
export function selectEntity(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>, alias: string): SelectQueryBuilder<ObjectLiteral> {
  const query = dataSource.createQueryBuilder().from(entity, alias);
  for (const { propertyName } of dataSource.getMetadata(entity).columns) query.addSelect(`${alias}.${propertyName}`, propertyName);
  return query;
}

/** The query builder writes only a constant LIMIT: a page's size (and where it starts) is bound with the statement's other values. */
export function page(statement: Statement, limit: number, offset?: number): Statement {
  if (offset === undefined) return { sql: `${statement.sql} LIMIT ?`, values: [...statement.values, limit] };
  return { sql: `${statement.sql} LIMIT ? OFFSET ?`, values: [...statement.values, limit, offset] };
}

/**
 * Statements for a listing with optional filters: `build` writes them once for each combination of the
 * filters' conditions, so each keeps a plain WHERE that its index serves; a use takes the ones for the
 * filters that have a value.
 */
export function byFilters<Filter extends string, T>(conditions: Record<Filter, string>, build: (where: string[]) => T): (values: Partial<Record<Filter, unknown>>) => T {
  const filters = Object.keys(conditions) as Filter[];
  const key = (given: Filter[]) => given.join();
  const built = new Map<string, T>();
  for (let combination = 0; combination < 1 << filters.length; combination++) {
    const given = filters.filter((_, i) => combination & (1 << i));
    built.set(key(given), build(given.map((filter) => conditions[filter])));
  }
  return (values) => built.get(key(filters.filter((filter) => values[filter] !== undefined)))!;
}

/** A value to be given later, by name. */
class Slot {
  constructor(readonly name: string) {}
}

/** Parameters for a query builder, one slot per name, to be filled by `PreparedStatement.with()`. */
export function slots<Name extends string>(...names: Name[]): Record<Name, unknown> {
  return Object.fromEntries(names.map((name) => [name, new Slot(name)])) as Record<Name, unknown>;
}

/**
 * The names SQL needs where the query builder cannot write the statement (UNION ALL, an index hint, an
 * upsert with expressions): the quoted table with the site's prefix, each property's column, and indexes.
 */
export function sqlNames<Entity extends ObjectLiteral>(dataSource: DataSource, entity: EntityTarget<Entity>): {
  table: string;
  column: Record<keyof Entity & string, string>;
  /** The name of the index on exactly these properties, in this order (for an index hint). */
  indexOn(...properties: string[]): string;
} {
  const metadata = dataSource.getMetadata(entity);
  const column = Object.fromEntries(metadata.columns.map((c) => [c.propertyName, `\`${c.databaseName}\``])) as Record<keyof Entity & string, string>;
  return {
    table: `\`${metadata.tableName}\``,
    column,
    indexOn(...properties: string[]) {
      const index = metadata.indices.find((candidate) => candidate.columns.map((c) => c.propertyName).join() === properties.join());
      if (!index) throw new Error(`${metadata.name} declares no index on ${properties.join(', ')}`);
      return `\`${index.givenName ?? index.name}\``;
    },
  };
}
