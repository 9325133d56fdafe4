import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { sql } from 'kysely';
import { upsertUser } from '../api/oauth/users.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import * as membersMigration from '../db/migrations/0012_members.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { obtainTokens, postToken, registerPublicClient, type ClientRegistration } from './support/oauth-browserless.js';
import { newOAuthUser, type TestUser } from './support/oauth-users.js';

/** /v1/members: roles, who may manage them, the last owner, and what removal does to a member's tokens. */
describe('members', () => {
  let client: ClientRegistration;

  before(async () => {
    client = await registerPublicClient();
  });

  /** A workspace with an owner, an admin and a plain member, each with an access token. */
  async function team(name: string) {
    const tenant = await newTenant(name);
    const owner = await newOAuthUser([tenant.tenantId], 'owner');
    const admin = await newOAuthUser([tenant.tenantId], 'admin');
    const member = await newOAuthUser([tenant.tenantId], 'member');
    const ids = await memberIds(tenant);
    expect((await call('PATCH', `/v1/members/${ids.get(admin.email)}`, { key: tenant.key, body: { role: 'admin' } })).status).to.equal(200);
    const tokens = {
      owner: (await obtainTokens({ client, user: owner })).access_token,
      admin: (await obtainTokens({ client, user: admin })).access_token,
      member: (await obtainTokens({ client, user: member })).access_token,
    };
    return { tenant, owner, admin, member, ids, tokens };
  }

  async function memberIds(tenant: TestTenant): Promise<Map<string, string>> {
    const listed = await call('GET', '/v1/members', { key: tenant.key });
    expect(listed.status).to.equal(200);
    return new Map(listed.body.members.map((m: { email: string; id: string }) => [m.email, m.id]));
  }

  async function rolesOf(tenant: TestTenant): Promise<Record<string, string>> {
    const listed = await call('GET', '/v1/members', { key: tenant.key });
    return Object.fromEntries(listed.body.members.map((m: { email: string; role: string }) => [m.email, m.role]));
  }

  it("lists members with their roles; a workspace's first member is its owner", async () => {
    const { tenant, owner, admin, member, ids } = await team('members-list');
    const listed = await call('GET', '/v1/members', { key: tenant.key });
    expect(listed.body.members).to.have.length(3);
    expect(await rolesOf(tenant)).to.deep.equal({ [owner.email]: 'owner', [admin.email]: 'admin', [member.email]: 'member' });
    const first = listed.body.members.find((m: { email: string }) => m.email === owner.email);
    expect(first).to.include({ id: ids.get(owner.email), user_id: owner.userId, role: 'owner' });
    expect(first.id).to.match(/^mem_/);
    const paged = await call('GET', '/v1/members?limit=2', { key: tenant.key });
    expect(paged.body.members).to.have.length(2);
    const rest = await call('GET', `/v1/members?limit=2&cursor=${paged.body.next_cursor}`, { key: tenant.key });
    expect(rest.body.members.map((m: { id: string }) => m.id)).to.deep.equal([listed.body.members[2].id]);
  });

  it('lets owners, admins and management keys manage members; refuses standard keys and plain members with 403', async () => {
    const { tenant, member, ids, tokens } = await team('members-roles');
    for (const key of [tenant.key, tokens.owner, tokens.admin]) expect((await call('GET', '/v1/members', { key })).status).to.equal(200);
    const target = ids.get(member.email)!;
    for (const key of [tenant.standardKey, tokens.member]) {
      for (const [method, path, body] of [
        ['GET', '/v1/members', undefined],
        ['PATCH', `/v1/members/${target}`, { role: 'admin' }],
        ['DELETE', `/v1/members/${target}`, undefined],
        ['GET', '/v1/invites', undefined],
        ['POST', '/v1/invites', { email: 'someone@example.test' }],
      ] as const) {
        const response = await call(method, path, { key, body });
        expect(response.status, `${method} ${path}`).to.equal(403);
        expect(response.body.error.code).to.equal('forbidden');
      }
    }
    expect((await rolesOf(tenant))[member.email]).to.equal('member');
    // An admin may promote and demote plain members.
    expect((await call('PATCH', `/v1/members/${target}`, { key: tokens.admin, body: { role: 'admin' } })).body.member.role).to.equal('admin');
    expect((await call('PATCH', `/v1/members/${target}`, { key: tokens.admin, body: { role: 'member' } })).body.member.role).to.equal('member');
  });

  it('reads the role at each request: a demoted admin is refused at once', async () => {
    const { tenant, admin, ids, tokens } = await team('members-demoted');
    expect((await call('GET', '/v1/members', { key: tokens.admin })).status).to.equal(200);
    await call('PATCH', `/v1/members/${ids.get(admin.email)}`, { key: tokens.owner, body: { role: 'member' } });
    expect((await call('GET', '/v1/members', { key: tokens.admin })).status).to.equal(403);
    expect((await call('GET', '/v1/agents', { key: tokens.admin })).status).to.equal(200);
    void tenant;
  });

  it('lets only owners make owners and change or remove an owner', async () => {
    const { tenant, owner, member, ids, tokens } = await team('members-owners');
    const ownerId = ids.get(owner.email)!;
    const memberId = ids.get(member.email)!;
    const promote = await call('PATCH', `/v1/members/${memberId}`, { key: tokens.admin, body: { role: 'owner' } });
    expect(promote.status).to.equal(403);
    expect(promote.body.error.message).to.match(/only an owner/);
    expect((await call('PATCH', `/v1/members/${ownerId}`, { key: tokens.admin, body: { role: 'member' } })).status).to.equal(403);
    expect((await call('DELETE', `/v1/members/${ownerId}`, { key: tokens.admin })).status).to.equal(403);
    expect((await call('POST', '/v1/invites', { key: tokens.admin, body: { email: 'boss@example.test', role: 'owner' } })).status).to.equal(403);
    expect((await rolesOf(tenant))[owner.email]).to.equal('owner');
    expect((await call('PATCH', `/v1/members/${memberId}`, { key: tokens.owner, body: { role: 'owner' } })).body.member.role).to.equal('owner');
  });

  it('never leaves a workspace without an owner: the last owner cannot be demoted or removed (409)', async () => {
    const { tenant, owner, member, ids, tokens } = await team('members-last-owner');
    const ownerId = ids.get(owner.email)!;
    for (const key of [tenant.key, tokens.owner]) {
      const demoted = await call('PATCH', `/v1/members/${ownerId}`, { key, body: { role: 'admin' } });
      expect(demoted.status).to.equal(409);
      expect(demoted.body.error.message).to.equal(`${owner.email} is the workspace's last owner and cannot be demoted; make another member an owner first`);
      const removed = await call('DELETE', `/v1/members/${ownerId}`, { key });
      expect(removed.status).to.equal(409);
      expect(removed.body.error.message).to.match(/last owner and cannot be removed/);
    }
    expect((await rolesOf(tenant))[owner.email]).to.equal('owner');
    // With a second owner, the first may step down; then the second is the last one.
    const memberId = ids.get(member.email)!;
    await call('PATCH', `/v1/members/${memberId}`, { key: tokens.owner, body: { role: 'owner' } });
    expect((await call('PATCH', `/v1/members/${ownerId}`, { key: tokens.owner, body: { role: 'member' } })).status).to.equal(200);
    expect((await call('DELETE', `/v1/members/${memberId}`, { key: tenant.key })).status).to.equal(409);
  });

  it('keeps one owner when the last two demote each other at the same time', async () => {
    const { tenant, owner, member, ids } = await team('members-race');
    const [a, b] = [ids.get(owner.email)!, ids.get(member.email)!];
    await call('PATCH', `/v1/members/${b}`, { key: tenant.key, body: { role: 'owner' } });
    const results = await Promise.all([
      call('PATCH', `/v1/members/${a}`, { key: tenant.key, body: { role: 'member' } }),
      call('PATCH', `/v1/members/${b}`, { key: tenant.key, body: { role: 'member' } }),
    ]);
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
    expect(Object.values(await rolesOf(tenant)).filter((role) => role === 'owner')).to.have.length(1);
  });

  it("never lets an admin change a member whom an owner is making an owner at the same moment", async function () {
    this.timeout(60_000);
    const { tenant, member, ids, tokens } = await team('members-promote-race');
    // Each round: the owner promotes the member while the admin demotes or removes them. Whichever
    // commits first, the admin's change may only stand if it came before the promotion.
    for (let round = 0; round < 10; round++) {
      const removing = round % 2 === 1;
      const target = ids.get(member.email)!;
      const [promoted, changed] = await Promise.all([
        call('PATCH', `/v1/members/${target}`, { key: tokens.owner, body: { role: 'owner' } }),
        removing ? call('DELETE', `/v1/members/${target}`, { key: tokens.admin }) : call('PATCH', `/v1/members/${target}`, { key: tokens.admin, body: { role: 'admin' } }),
      ]);
      const role = (await rolesOf(tenant))[member.email];
      if (promoted.status === 200) {
        expect(changed.status, `round ${round}: the admin changed an owner`).to.be.oneOf(removing ? [403] : [200, 403]);
        // Had the admin's demotion come second it would have been refused: the member stays an owner.
        expect(role, `round ${round}`).to.equal('owner');
        if (changed.status === 403) expect(changed.body.error.message).to.match(/only an owner may/);
      } else {
        // The removal came first: the promotion finds no member.
        expect([promoted.status, changed.status], `round ${round}`).to.deep.equal([404, 200]);
        expect(role).to.equal(undefined);
      }
      expect(Object.values(await rolesOf(tenant)).filter((r) => r === 'owner').length, `round ${round}`).to.be.at.least(1);
      // Back to a plain member for the next round.
      if (role === undefined) {
        await upsertUser(testPlatform().db, { email: member.email, password: member.password, tenantIds: [tenant.tenantId] });
        ids.set(member.email, (await memberIds(tenant)).get(member.email)!);
      } else {
        expect((await call('PATCH', `/v1/members/${ids.get(member.email)}`, { key: tokens.owner, body: { role: 'member' } })).status).to.equal(200);
      }
    }
  });

  it('keeps an owner when owners demote each other while one of them promotes a member', async function () {
    this.timeout(60_000);
    const { tenant, owner, admin, member, ids, tokens } = await team('members-three-way');
    const [a, b, m] = [ids.get(owner.email)!, ids.get(admin.email)!, ids.get(member.email)!];
    for (let round = 0; round < 4; round++) {
      // The admin is made a second owner: A and B demote each other while A promotes M.
      await call('PATCH', `/v1/members/${b}`, { key: tenant.key, body: { role: 'owner' } });
      await call('PATCH', `/v1/members/${a}`, { key: tenant.key, body: { role: 'owner' } });
      await call('PATCH', `/v1/members/${m}`, { key: tenant.key, body: { role: 'member' } });
      const results = await Promise.all([
        call('PATCH', `/v1/members/${b}`, { key: tokens.owner, body: { role: 'member' } }),
        call('PATCH', `/v1/members/${a}`, { key: tokens.admin, body: { role: 'member' } }),
        call('PATCH', `/v1/members/${m}`, { key: tokens.owner, body: { role: 'owner' } }),
      ]);
      const roles = await rolesOf(tenant);
      expect(Object.values(roles).filter((r) => r === 'owner').length, `round ${round}`).to.be.at.least(1);
      // A demoted owner's later request is refused (403) or, as the last owner's demotion, 409.
      for (const result of results) expect(result.status, `round ${round}`).to.be.oneOf([200, 403, 409]);
      // Whoever is demoted first is no owner any more when their own request runs.
      const [aDemotesB, bDemotesA] = results;
      expect(aDemotesB!.status === 200 && bDemotesA!.status === 200, `round ${round}: both owners demoted each other`).to.equal(false);
    }
  });

  it("removes a member and revokes their OAuth grants for the workspace: access and refresh tokens stop working at once", async () => {
    const { tenant, member, ids } = await team('members-remove');
    const other = await newTenant('members-remove-other');
    await upsertUser(testPlatform().db, { email: member.email, password: member.password, tenantIds: [other.tenantId] });
    const here = await obtainTokens({ client, user: member, tenantId: tenant.tenantId });
    const there = await obtainTokens({ client, user: member, tenantId: other.tenantId });
    expect((await call('GET', '/v1/agents', { key: here.access_token })).status).to.equal(200);

    const removed = await call('DELETE', `/v1/members/${ids.get(member.email)}`, { key: tenant.key });
    expect(removed.status).to.equal(200);
    expect(removed.body).to.deep.equal({ deleted: true, id: ids.get(member.email) });

    expect((await call('GET', '/v1/agents', { key: here.access_token })).status).to.equal(401);
    const refreshed = await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: here.refresh_token });
    expect(refreshed.status).to.equal(400);
    expect(refreshed.body.error).to.equal('invalid_grant');
    const grants = await testPlatform().db.selectFrom('oauth_grants').select(['tenant_id', 'revoked_at', 'revoked_reason']).where('user_id', '=', member.userId).execute();
    const inRemoved = grants.filter((g) => g.tenant_id === tenant.tenantId);
    expect(inRemoved.length).to.be.above(0);
    expect(inRemoved.every((g) => g.revoked_at !== null && g.revoked_reason === 'member_removed')).to.equal(true);
    // Their authorization in another workspace is untouched.
    expect((await call('GET', '/v1/agents', { key: there.access_token })).status).to.equal(200);
    expect(grants.filter((g) => g.tenant_id === other.tenantId).every((g) => g.revoked_at === null)).to.equal(true);
    expect([...(await memberIds(tenant)).keys()]).to.not.include(member.email);
    expect((await call('DELETE', `/v1/members/${ids.get(member.email)}`, { key: tenant.key })).status).to.equal(404);
  });

  it("answers 404 for another workspace's member ids, and 400 for an unknown role", async () => {
    const { tenant, member, ids, tokens } = await team('members-tenancy');
    const other = await newTenant('members-tenancy-other');
    const target = ids.get(member.email)!;
    for (const key of [other.key]) {
      expect((await call('PATCH', `/v1/members/${target}`, { key, body: { role: 'admin' } })).status).to.equal(404);
      expect((await call('DELETE', `/v1/members/${target}`, { key })).status).to.equal(404);
    }
    expect((await call('GET', '/v1/members', { key: other.key })).body.members).to.deep.equal([]);
    expect((await call('PATCH', `/v1/members/mem_nope`, { key: tokens.owner, body: { role: 'admin' } })).status).to.equal(404);
    const bad = await call('PATCH', `/v1/members/${target}`, { key: tenant.key, body: { role: 'king' } });
    expect(bad.status).to.equal(400);
    expect((await call('PATCH', `/v1/members/${target}`, { key: tenant.key, body: {} })).status).to.equal(400);
    expect((await rolesOf(tenant))[member.email]).to.equal('member');
  });

  it("migrates existing memberships: each workspace's earliest member becomes its owner, the others members", async function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-members-'));
    const scratch = await openDatabase({ kind: 'pglite', dataDir: dir });
    try {
      const { db } = scratch;
      await migrateToLatest(db);
      // Back to the schema before 0012, with memberships as the OAuth work made them.
      await membersMigration.down(db as never);
      await db.insertInto('tenants').values([{ id: 'ten_a', name: 'a' }, { id: 'ten_b', name: 'b' }]).execute();
      await db.insertInto('users').values(['u1', 'u2', 'u3'].map((id) => ({ id, email: `${id}@example.test`, password_hash: 'x' }))).execute();
      const rows = [
        ['u2', 'ten_a', '2026-01-02'],
        ['u1', 'ten_a', '2026-01-03'],
        ['u3', 'ten_a', '2026-01-01'],
        ['u1', 'ten_b', '2026-02-01'],
      ];
      for (const [user, tenant, at] of rows) {
        await sql`insert into memberships (user_id, tenant_id, created_at) values (${user}, ${tenant}, ${at}::timestamptz)`.execute(db);
      }
      await membersMigration.up(db as never);
      const migrated = await db.selectFrom('memberships').select(['id', 'user_id', 'tenant_id', 'role']).orderBy('tenant_id').orderBy('user_id').execute();
      expect(migrated.map((m) => [m.tenant_id, m.user_id, m.role])).to.deep.equal([
        ['ten_a', 'u1', 'member'],
        ['ten_a', 'u2', 'member'],
        ['ten_a', 'u3', 'owner'],
        ['ten_b', 'u1', 'owner'],
      ]);
      expect(migrated.every((m) => /^mem_[0-9A-F]{26}$/.test(m.id))).to.equal(true);
      expect(new Set(migrated.map((m) => m.id)).size).to.equal(4);
    } finally {
      await scratch.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes the first user the CLI adds to a workspace its owner and later ones members', async () => {
    const tenant = await newTenant('members-cli');
    const first: TestUser = await newOAuthUser([tenant.tenantId], 'first');
    const second = await newOAuthUser([tenant.tenantId], 'second');
    // Adding the owner again keeps their role.
    await upsertUser(testPlatform().db, { email: first.email, password: first.password, tenantIds: [tenant.tenantId] });
    expect(await rolesOf(tenant)).to.deep.equal({ [first.email]: 'owner', [second.email]: 'member' });
  });
});
