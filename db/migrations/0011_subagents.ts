import { sql, type Kysely } from 'kysely';

/**
 * Subagents: a tool of kind `agent` runs another agent as a child run. The child's run row names its
 * parent, the parent's step that started it (so a retried step finds the child it already made), and its
 * depth below the run a client started.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tools drop constraint tools_kind_check`.execute(db);
  await sql`alter table tools add constraint tools_kind_check check (kind in ('builtin', 'http', 'mcp', 'agent'))`.execute(db);
  await db.schema.alterTable('tools').addColumn('agent', 'jsonb').execute();

  await db.schema
    .alterTable('runs')
    .addColumn('parent_run_id', 'text', (c) => c.references('runs.id').onDelete('cascade'))
    .addColumn('parent_step', 'integer')
    .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('runs_parent_step_idx').unique().on('runs').columns(['parent_run_id', 'parent_step']).where(sql.ref('parent_run_id'), 'is not', null).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_parent_step_idx').execute();
  await db.schema.alterTable('runs').dropColumn('parent_run_id').dropColumn('parent_step').dropColumn('depth').execute();
  await db.schema.alterTable('tools').dropColumn('agent').execute();
  // Subagent tools cannot exist without this migration.
  await sql`delete from tools where kind = 'agent'`.execute(db);
  await sql`alter table tools drop constraint tools_kind_check`.execute(db);
  await sql`alter table tools add constraint tools_kind_check check (kind in ('builtin', 'http', 'mcp'))`.execute(db);
}
