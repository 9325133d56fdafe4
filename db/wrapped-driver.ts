import type { Dialect, Driver } from 'kysely';

/** `dialect` with its driver wrapped by `wrap`: how db/ changes what a connection does around Kysely's own driver. */
export function withWrappedDriver(dialect: Dialect, wrap: (driver: Driver) => Driver): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => wrap(dialect.createDriver()),
  };
}
