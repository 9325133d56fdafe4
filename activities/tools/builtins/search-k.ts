/** The most hits a search tool returns, and how many when the model does not say. */
export const MAX_TOOL_K = 50;
const DEFAULT_TOOL_K = 5;

/** The tool's `k` argument, clamped to 1…MAX_TOOL_K. */
export function toolK(args: Record<string, unknown>): number {
  return typeof args.k === 'number' && Number.isInteger(args.k) ? Math.min(Math.max(args.k, 1), MAX_TOOL_K) : DEFAULT_TOOL_K;
}
