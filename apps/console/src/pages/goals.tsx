// The tenant's goals, newest first: filtered by state, searched by objective or id, paged by cursor, and
// refreshed every few seconds while the first page is shown.
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "@loopsmith/client";
import { age, href, usd } from "../format";
import { errorText, type Session } from "../session";
import { StateBadge } from "../parts/state";
import { Columns } from "../parts/viewers";

type Summary = Schemas["GoalSummary"];
const STATES = ["plan", "generate", "execute", "inspect", "refine", "awaiting_approval", "verified", "failed", "cancelled", "errored"] as const;
type State = (typeof STATES)[number];
const REFRESH_MS = 3000;

export function GoalsPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const state = (STATES as readonly string[]).includes(query.get("state") ?? "") ? (query.get("state") as State) : undefined;
  const q = query.get("q") ?? "";
  const cursor = query.get("cursor") ?? undefined;
  const [goals, setGoals] = useState<Summary[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState(q);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    (async () => {
      const { data, error: e, response } = await session.client.GET("/goals", { params: { query: { state, q: q || undefined, cursor, limit: 50 } } });
      if (!live) return;
      if (data) {
        setGoals(data.goals);
        setNext(data.next_cursor);
        setError(null);
      } else setError(errorText(e, response.status));
    })().catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
  }, [session, state, q, cursor, tick]);

  // Live: the first page is read again every few seconds while the tab is visible (later pages hold
  // still while you read them).
  useEffect(() => {
    if (cursor) return;
    const t = setInterval(() => {
      if (!document.hidden) setTick((n) => n + 1);
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [cursor]);

  const go = (patch: Record<string, string | undefined>) => {
    location.hash = href("", { state, q: q || undefined, ...patch });
  };
  return (
    <section>
      <h1>Goals</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          go({ q: search.trim() || undefined, cursor: undefined });
        }}
      >
        <label for="state-filter">State</label>
        <select id="state-filter" value={state ?? ""} onChange={(e) => go({ state: e.currentTarget.value || undefined, cursor: undefined })}>
          <option value="">any</option>
          {STATES.map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
        <label for="goal-search">Search</label>
        <input id="goal-search" type="search" placeholder="objective text or goal id" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <button type="submit">Search</button>
        <a class="button" href="#/submit">
          Submit a goal
        </a>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {goals === null && !error && <p aria-busy="true">Loading…</p>}
      {goals && goals.length === 0 && <p>No goals{state || q ? " match" : " yet"}.</p>}
      {goals && goals.length > 0 && (
        <table class="goals">
          <caption class="visually-hidden">Goals, newest first</caption>
          <Columns names={["State", "Objective", "Attempts", "Cost", "Age", "Failure"]} />
          <tbody>
            {goals.map((g) => (
              <tr key={g.id} data-goal={g.id}>
                <td>
                  <StateBadge state={g.state} />
                </td>
                <td class="objective">
                  <a href={`#/goals/${g.id}`}>{g.objective.length > 140 ? `${g.objective.slice(0, 140)}…` : g.objective}</a>
                </td>
                <td class="num">{g.attempts}</td>
                <td class="num">{usd(g.cost_usd)}</td>
                <td>
                  <time dateTime={g.created_at} title={g.created_at}>
                    {age(g.created_at)}
                  </time>
                </td>
                <td>{g.failure_reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {cursor && (
          <a class="button" href={href("", { state, q: q || undefined })}>
            Newest
          </a>
        )}
        {next && (
          <a class="button" href={href("", { state, q: q || undefined, cursor: next })}>
            Older
          </a>
        )}
      </nav>
    </section>
  );
}
