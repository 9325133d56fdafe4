import { PII_ENTITIES, type PiiConfig, type PiiEntity } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { findPii } from './pii/find-pii.js';
import { replaceSpans } from './spans.js';

const LABELS: Record<PiiEntity, string> = {
  email: '[EMAIL]',
  phone: '[PHONE]',
  credit_card: '[CREDIT_CARD]',
  us_ssn: '[US_SSN]',
  iban: '[IBAN]',
  ip_address: '[IP_ADDRESS]',
};

/**
 * Personal data: emails, phone numbers, payment cards, US SSNs, IBANs and IP addresses (see pii/ for
 * what each detector accepts). Redaction writes the entity's label (`[EMAIL]`) or masks the value.
 * The detail names entity types and counts, never a value.
 */
export const piiGuardrail: GuardrailKindDefinition<PiiConfig> = {
  problems() {
    return [];
  },

  prepare(config) {
    const wanted = new Set<PiiEntity>(config.entities ?? PII_ENTITIES);
    const redaction = config.redaction ?? 'label';
    return (text) => {
      const matches = findPii(text, wanted);
      if (matches.length === 0) return undefined;
      const counts = new Map<PiiEntity, number>();
      for (const { entity } of matches) counts.set(entity, (counts.get(entity) ?? 0) + 1);
      const found = PII_ENTITIES.filter((entity) => counts.has(entity)).map((entity) => `${counts.get(entity)} ${entity}`);
      return {
        detail: `text contains personal data: ${found.join(', ')}`,
        redact: () => replaceSpans(text, matches, (match, value) => (redaction === 'label' ? LABELS[match.entity] : mask(value))),
      };
    };
  },
};

/**
 * Keeps the last 4 characters and stars the rest, as card receipts do. A short value (an IPv6 `::1`)
 * keeps at most half of its characters, so a mask never shows the whole value.
 */
export function mask(value: string): string {
  const characters = [...value];
  const kept = Math.min(4, Math.floor(characters.length / 2));
  return '*'.repeat(characters.length - kept) + characters.slice(characters.length - kept).join('');
}
