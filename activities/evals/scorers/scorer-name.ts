/** The key of a scorer's score in a cell's `scores`: its `name`, else its type. */
export function scorerName(config: { type: string; name?: string }): string {
  return config.name ?? config.type;
}
