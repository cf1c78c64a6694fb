// One goal: what GET /goals/:id shows, followed live over its event stream until it rests, with the
// actions the API offers on it.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Goal } from "@loopsmith/client";
import { age, localTime, usd } from "../format";
import { StateBadge } from "../parts/state";
import { Artifacts, Attempts, Cost, Deliveries, PlanAndChecks, Receipt, SelfTest, Timeline } from "../parts/sections";
import { errorText, follow, saveAs, type Session } from "../session";

const RESTING = ["verified", "failed", "cancelled", "errored"];

export function GoalPage({ session, id }: { session: Session; id: string }) {
  const [goal, setGoal] = useState<Goal | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const loading = useRef<Promise<void> | null>(null);
  const again = useRef(false);

  // One read at a time; a row that arrives during a read asks for one more.
  const load = async (): Promise<void> => {
    if (loading.current) {
      again.current = true;
      return loading.current;
    }
    loading.current = (async () => {
      do {
        again.current = false;
        const { data, error: e, response } = await session.client.GET("/goals/{id}", { params: { path: { id } } });
        if (data) {
          setGoal(data);
          setError(null);
        } else if (response.status === 404 || response.status === 400) setMissing(errorText(e, response.status));
        else setError(errorText(e, response.status));
      } while (again.current);
    })()
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => {
        loading.current = null;
      });
    return loading.current;
  };

  useEffect(() => {
    void load();
  }, [id]);
  const resting = goal ? RESTING.includes(goal.state) : false;
  useEffect(() => {
    if (!goal || resting) return;
    return follow(session, id, { onRow: () => void load(), onEnd: () => void load() });
  }, [id, goal !== null, resting]);

  if (missing)
    return (
      <section>
        <h1>Goal not found</h1>
        <p>
          No goal <code>{id}</code> for this key. It may belong to another tenant, or the id is wrong.
        </p>
        <p class="hint">{missing}</p>
        <a href="#/">Back to the goals</a>
      </section>
    );
  if (!goal) return <p aria-busy="true">{error ?? "Loading…"}</p>;

  const act = async (label: string, call: () => Promise<{ response: Response; error?: unknown }>) => {
    setNote(null);
    try {
      const { response, error: e } = await call();
      setNote(response.ok ? `${label}: done.` : `${label}: ${errorText(e, response.status)}`);
    } catch (err) {
      setNote(`${label}: ${errorText(err)}`);
    }
    void load();
  };
  const path = { params: { path: { id } } };
  const exportScript = async () => {
    const { data, error: e, response } = await session.client.GET("/goals/{id}/script", path);
    if (data) saveAs(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }), `goal-${id}-replay.json`);
    else setNote(`Export: ${errorText(e, response.status)}`);
  };
  const failure = goal.failure_report;
  const version = `${goal.state}:${goal.transitions.length}`;
  return (
    <article aria-labelledby="goal-h">
      <header class="goal-head">
        <h1 id="goal-h">{goal.objective.length > 200 ? `${goal.objective.slice(0, 200)}…` : goal.objective}</h1>
        <p>
          <StateBadge state={goal.state} testId="goal-state" /> · goal <code>{goal.id}</code> · created{" "}
          <time dateTime={goal.created_at} title={localTime(goal.created_at)}>
            {age(goal.created_at)}
          </time>{" "}
          · attempt {goal.attempts} of {goal.max_attempts} · {usd(goal.cost.cost_usd)}
          {!resting && <span class="live"> · following live</span>}
        </p>
        {goal.schedule_id && (
          <p data-testid="goal-schedule">
            A tick of schedule <code>{goal.schedule_id}</code>
            {goal.pinned_from ? (
              <>
                {" "}
                that ran the program pinned from goal <a href={`#/goals/${goal.pinned_from}`}>{goal.pinned_from}</a> first, with no planner or generator call
              </>
            ) : (
              ", before any program was pinned"
            )}
            .
          </p>
        )}
        <div class="actions" role="group" aria-label="Actions">
          {!resting && (
            <button type="button" onClick={() => act("Cancel", () => session.client.POST("/goals/{id}/cancel", path))}>
              Cancel
            </button>
          )}
          {goal.state === "awaiting_approval" && (
            <>
              <button type="button" onClick={() => act("Approve", () => session.client.POST("/goals/{id}/approve", { ...path, body: {} }))}>
                Approve
              </button>
              <button type="button" onClick={() => act("Reject", () => session.client.POST("/goals/{id}/reject", path))}>
                Reject
              </button>
            </>
          )}
          {resting && goal.state !== "errored" && (
            <button type="button" onClick={exportScript}>
              Export replay script
            </button>
          )}
          <button type="button" onClick={() => saveAs(new Blob([JSON.stringify(goal, null, 2)], { type: "application/json" }), `goal-${id}.json`)}>
            Download goal JSON
          </button>
        </div>
        {note && <p role="status">{note}</p>}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </header>
      {failure && (
        <section aria-labelledby="failure-h" class="failure">
          <h2 id="failure-h">Why it failed</h2>
          <p>
            <strong>{failure.reason}</strong>: {failure.message}
          </p>
        </section>
      )}
      {goal.state === "verified" && goal.report !== null && (
        <section aria-labelledby="report-h">
          <h2 id="report-h">Verified report</h2>
          <pre tabIndex={0} class="text">{JSON.stringify(goal.report, null, 2)}</pre>
        </section>
      )}
      <Timeline goal={goal} />
      <PlanAndChecks goal={goal} />
      <Attempts session={session} goal={goal} />
      <Artifacts session={session} goal={goal} version={version} />
      <SelfTest goal={goal} />
      <Cost goal={goal} />
      <Receipt session={session} goal={goal} />
      <Deliveries session={session} goal={goal} version={version} />
    </article>
  );
}
