import type { PiiEntity } from '../config-schemas.js';
import type { Span } from '../spans.js';
import type { Detector } from './candidate.js';
import { findCreditCards } from './credit-card.js';
import { findEmails } from './email.js';
import { findIbans } from './iban.js';
import { findIpv4Addresses, findIpv6Addresses } from './ip-address.js';
import { findPhones } from './phone.js';
import { findUsSsns } from './us-ssn.js';

export interface PiiMatch extends Span {
  entity: PiiEntity;
}

/**
 * Most specific first: a stretch of text claimed by one detector is not looked at by the later ones,
 * so a card number or an IP address is never also reported as a phone. Every detector claims, even
 * for entities not asked for: a card is not a phone just because only phones are looked for.
 */
const DETECTORS: ReadonlyArray<{ entity: PiiEntity; find: Detector }> = [
  { entity: 'email', find: findEmails },
  { entity: 'iban', find: findIbans },
  { entity: 'us_ssn', find: findUsSsns },
  { entity: 'credit_card', find: findCreditCards },
  { entity: 'ip_address', find: findIpv6Addresses },
  { entity: 'ip_address', find: findIpv4Addresses },
  { entity: 'phone', find: findPhones },
];

/** The values of the wanted entities in the text, in order, without overlaps. */
export function findPii(text: string, wanted: ReadonlySet<PiiEntity>): PiiMatch[] {
  const claimed = new Uint8Array(text.length);
  const found: PiiMatch[] = [];
  for (const { entity, find } of DETECTORS) {
    for (const candidate of find(text)) {
      if (claimed.subarray(candidate.start, candidate.end).some((unit) => unit === 1)) continue;
      claimed.fill(1, candidate.start, candidate.end);
      if (candidate.valid && wanted.has(entity)) found.push({ start: candidate.start, end: candidate.end, entity });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}
