/** The plan kept in workflow state by `plan_write` and reported by `verify_plan`. */
export interface PlanStep {
  title: string;
  done: boolean;
}

export function writePlan(args: Record<string, unknown>): PlanStep[] {
  const steps = args.steps;
  if (!Array.isArray(steps)) throw new Error('plan_write needs "steps": a list of {"title", "done"}');
  return steps.map((step, i) => {
    const title = typeof step === 'string' ? step : step?.title;
    if (typeof title !== 'string' || !title) throw new Error(`plan step ${i + 1} needs a "title"`);
    return { title, done: typeof step === 'object' && step?.done === true };
  });
}

export function verifyPlan(plan: PlanStep[]) {
  return {
    steps: plan,
    done: plan.filter((s) => s.done).map((s) => s.title),
    pending: plan.filter((s) => !s.done).map((s) => s.title),
    complete: plan.length > 0 && plan.every((s) => s.done),
  };
}
