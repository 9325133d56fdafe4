import { expect } from 'chai';
import { databaseConfigFromEnv } from '../db/config.js';

describe('database configuration from the environment', () => {
  const url = 'postgres://db.example/agent_platform';

  it('sizes both pools, the read pool like the other unless told', () => {
    expect(databaseConfigFromEnv({ DATABASE_URL: url })).to.include({ kind: 'postgres', poolSize: 10, readPoolSize: 10 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: '25' })).to.include({ poolSize: 25, readPoolSize: 25 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: '25', DATABASE_READ_POOL_SIZE: '4' })).to.include({ poolSize: 25, readPoolSize: 4 });
  });

  it('refuses a pool size that is not a positive integer, naming the setting', () => {
    for (const bad of ['abc', '0', '-3', '2.5']) {
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: bad })).to.throw(`DATABASE_POOL_SIZE must be a positive integer, not '${bad}'`);
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_READ_POOL_SIZE: bad })).to.throw(`DATABASE_READ_POOL_SIZE must be a positive integer, not '${bad}'`);
    }
  });

  it('prepares repeated statements unless DATABASE_PREPARED_STATEMENTS is off, and refuses anything but on and off', () => {
    expect(databaseConfigFromEnv({ DATABASE_URL: url })).to.include({ preparedStatements: true });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'on' })).to.include({ preparedStatements: true });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'off' })).to.include({ preparedStatements: false });
    for (const bad of ['false', 'no', 'OFF']) {
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: bad })).to.throw(`DATABASE_PREPARED_STATEMENTS must be 'on' or 'off', not '${bad}'`);
    }
  });
});
