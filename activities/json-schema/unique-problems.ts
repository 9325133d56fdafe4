/** The problems in their order, without repeats of the same field and message (a validator may report one more than once). */
export function uniqueProblems<Problem extends { field: string; message: string }>(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.field}\0${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
