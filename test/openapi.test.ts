import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { allOperations } from '../api/app.js';
import { errorCodes } from '../api/openapi.js';
import { ERROR_STATUS } from '../api/errors.js';
import { call } from './support/api.js';

describe('OpenAPI document', () => {
  let document: any;
  before(async () => {
    document = (await call('GET', '/openapi.json')).body;
  });

  it('is a valid OpenAPI 3.1.0 document, info version 1.0.0', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
    expect(document.openapi).to.equal('3.1.0');
    expect(document.info.version).to.equal('1.0.0');
  });

  it('lists every served operation once, each with a unique operationId', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { operationId: string }>).map(([method, op]) => ({ path, method, id: op.operationId })),
    );
    const ids = operations.map((o) => o.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.every(Boolean)).to.equal(true);
    expect(operations.map((o) => `${o.method} ${o.path}`).sort()).to.deep.equal(
      allOperations().map((o) => `${o.method} ${o.path}`).sort(),
    );
  });

  it('declares bearer auth, open only where the route is public', () => {
    expect(document.components.securitySchemes.bearer).to.include({ type: 'http', scheme: 'bearer' });
    expect(document.security).to.deep.equal([{ bearer: [] }]);
    for (const operation of allOperations()) {
      const described = document.paths[operation.path][operation.method];
      expect(described.security, operation.operationId).to.deep.equal(operation.access === 'public' ? [] : undefined);
    }
  });

  it('documents the error responses each operation can give, with the error body', () => {
    for (const operation of allOperations()) {
      const responses = document.paths[operation.path][operation.method].responses;
      for (const code of errorCodes(operation)) {
        const response = responses[String(ERROR_STATUS[code])];
        expect(response, `${operation.operationId} ${code}`).to.exist;
        expect(response.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
      }
    }
    expect(document.paths['/v1/agents/{id}'].patch.responses).to.include.keys('401', '403', '404', '409');
  });
});
