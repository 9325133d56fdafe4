/** The database role tenant-scoped transactions switch to. It has no BYPASSRLS and owns no table. */
export const TENANT_ROLE = 'agent_platform_tenant';
