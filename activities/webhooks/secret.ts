/**
 * Where a subscription's sealed secret belongs: a ciphertext copied to another row does not open there.
 * The secret itself is a Standard Webhooks one (activities/standard-webhooks/secret.ts).
 */
export function webhookSecretContext(tenantId: string, webhookId: string): string {
  return `webhooks/${tenantId}/${webhookId}/secret`;
}
