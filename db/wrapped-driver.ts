import { PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type Dialect, type Driver } from 'kysely';

/** `dialect` with its driver wrapped by `wrap`: how db/ changes what a connection does around Kysely's own driver. */
export function withWrappedDriver(dialect: Dialect, wrap: (driver: Driver) => Driver): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => wrap(dialect.createDriver()),
  };
}

/** Postgres' SQL over a driver of db/'s own instead of Kysely's (the tenant read pool's, or none to compile only). */
export function postgresDialectWithDriver(createDriver: () => Driver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createDriver,
  };
}
