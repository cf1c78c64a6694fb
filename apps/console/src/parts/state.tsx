export function StateBadge({ state, testId }: { state: string; testId?: string }) {
  return (
    <span class={`state state-${state}`} data-state={state} data-testid={testId}>
      {state.replace(/_/g, " ")}
    </span>
  );
}
