/** A value quoted for a reason, cut short so that a reason stays one readable line. */
export function quoted(text: string, max = 60): string {
  const chars = [...text];
  return JSON.stringify(chars.length > max ? `${chars.slice(0, max).join('')}…` : text);
}

/** A number for a reason: at most 4 decimals, without trailing zeros. */
export function shortNumber(value: number): string {
  return String(Math.round(value * 10_000) / 10_000);
}
