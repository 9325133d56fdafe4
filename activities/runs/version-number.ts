import { MAX_REQUEST_INTEGER } from '../json-schema/types.js';

/**
 * Whether a graph's pinned version (of a prompt or a skill) can be one: versions count from 1 and are
 * Postgres `integer`s, and a larger number would fail the lookup's query instead of finding no version.
 */
export function isVersionNumber(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_REQUEST_INTEGER;
}
