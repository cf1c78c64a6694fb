export function StateBadge({ state }: { state: string }) {
  return <span class={`state state-${state}`}>{state.replace(/_/g, " ")}</span>;
}
