// The sections of a goal's page. Each shows part of GET /goals/:id (or a route beside it) and nothing more.
import { useEffect, useState } from "preact/hooks";
import type { Goal, Schemas } from "@loopsmith/client";
import { bytes, duration, localTime, usd } from "../format";
import { checkReceipt, type PublishedKey, type ReceiptCheck } from "../receipt";
import { errorText, fetchBytes, saveAs, type Session } from "../session";
import { decidedBy } from "../tape";
import { StateBadge } from "./state";
import { Columns, FileView, FindingsTable, ProgramDiff, type Finding } from "./viewers";

type Transition = Goal["transitions"][number];
type Check = Goal["checks"][number];
const TERMINAL = ["verified", "failed", "cancelled"];

const detailOf = (t: Transition) => (t.detail ?? {}) as Record<string, unknown>;

export function Timeline({ goal }: { goal: Goal }) {
  const rows = goal.transitions;
  const now = Date.now();
  return (
    <section aria-labelledby="timeline-h">
      <h2 id="timeline-h">Timeline</h2>
      <p class="tape">{goal.tape}</p>
      <ol class="timeline">
        {rows.map((t, i) => {
          const next = rows[i + 1];
          const end = next ? Date.parse(next.at) : TERMINAL.includes(t.to) || t.to === "errored" ? null : now;
          const spent = end === null ? null : end - Date.parse(t.at);
          const d = detailOf(t);
          return (
            <li data-seq={t.seq} class={`step step-${t.to}`}>
              <StateBadge state={t.to} />
              <span class="when">
                <time dateTime={t.at}>{localTime(t.at)}</time>
                {spent !== null && <span class="spent"> · {duration(spent)} in {t.to.replace(/_/g, " ")}</span>}
              </span>
              <span class="who">decided by {decidedBy(t)}</span>
              {typeof d.attempt === "number" && <span class="attempt"> · attempt {d.attempt}</span>}
              <details>
                <summary>Details of row {t.seq}</summary>
                <pre tabIndex={0} class="text">{JSON.stringify(t.detail, null, 2)}</pre>
              </details>
            </li>
          );
        })}
      </ol>
    </section>
  );
}

export function PlanAndChecks({ goal }: { goal: Goal }) {
  return (
    <section aria-labelledby="plan-h">
      <h2 id="plan-h">Plan and checks</h2>
      {goal.plan ? (
        <>
          <ol class="approach">
            {goal.plan.approach.map((a) => (
              <li>{a}</li>
            ))}
          </ol>
          <p>
            <strong>Output contract:</strong> {goal.plan.output_contract}
          </p>
        </>
      ) : (
        <p>Not planned yet.</p>
      )}
      <table class="checks">
        <caption>Checks: the definition of done</caption>
        <Columns names={["Check", "From", "Latest verdict", "Params"]} />
        <tbody>
          {goal.checks.map((c) => (
            <tr data-check={c.id}>
              <th scope="row">
                <code>{c.id}</code>
                {c.hidden && (
                  <span class="tag hidden-tag" title="Hidden from the models: they were told it exists and what it reads, never its material.">
                    hidden from models
                  </span>
                )}
                {c.description && <div class="hint">{c.description}</div>}
              </th>
              <td>{c.source}</td>
              <td>{c.latest ? <Verdict passed={c.latest.passed} message={`attempt ${c.latest.attempt}: ${c.latest.message}`} /> : "not run yet"}</td>
              <td>
                <details>
                  <summary>params</summary>
                  <pre tabIndex={0} class="text">{JSON.stringify(c.params, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Verdict({ passed, message }: { passed: boolean; message: string }) {
  return (
    <span class={passed ? "pass" : "fail"}>
      <strong>{passed ? "pass" : "fail"}</strong> {message}
    </span>
  );
}

/** The program of attempt n, fetched once per page. */
function usePrograms(session: Session, goal: Goal) {
  const [programs, setPrograms] = useState<Record<number, string | Error>>({});
  const load = async (n: number) => {
    if (programs[n] !== undefined || n < 1) return;
    try {
      const text = await (await fetchBytes(session, `/goals/${goal.id}/attempts/${n}/program`)).text();
      setPrograms((p) => ({ ...p, [n]: text }));
    } catch (e) {
      setPrograms((p) => ({ ...p, [n]: e as Error }));
    }
  };
  return { programs, load };
}

export function Attempts({ session, goal }: { session: Session; goal: Goal }) {
  const runs = goal.executions;
  const [shown, setShown] = useState<number>(runs.length ? runs[runs.length - 1]!.attempt : 0);
  const [mode, setMode] = useState<"program" | "diff">("program");
  const { programs, load } = usePrograms(session, goal);
  const run = runs.find((r) => r.attempt === shown);
  useEffect(() => {
    if (!run) return;
    void load(shown);
    if (mode === "diff") void load(shown - 1);
  }, [shown, mode, run?.attempt]);
  useEffect(() => {
    if (runs.length && !run) setShown(runs[runs.length - 1]!.attempt);
  }, [runs.length]);
  if (!runs.length)
    return (
      <section aria-labelledby="attempts-h">
        <h2 id="attempts-h">Attempts</h2>
        <p>No program has run yet.</p>
      </section>
    );
  const verdicts = goal.transitions.filter((t) => t.from === "inspect" && detailOf(t).attempt === shown).map((t) => detailOf(t).checks as { id: string; passed: boolean; message: string }[] | undefined)[0];
  const program = programs[shown];
  const previous = programs[shown - 1];
  // The tabs as WAI-ARIA describes them: one Tab stop (the selected tab), arrows, Home and End move along.
  const onTabKey = (e: KeyboardEvent) => {
    const i = runs.findIndex((r) => r.attempt === shown);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: runs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = runs[(to + runs.length) % runs.length]!.attempt;
    setShown(next);
    document.getElementById(`attempt-tab-${next}`)?.focus();
  };
  return (
    <section aria-labelledby="attempts-h">
      <h2 id="attempts-h">Attempts</h2>
      <div role="tablist" aria-label="Attempts" class="tabs" onKeyDown={onTabKey}>
        {runs.map((r) => (
          <button
            type="button"
            role="tab"
            aria-selected={r.attempt === shown}
            tabIndex={r.attempt === shown ? 0 : -1}
            id={`attempt-tab-${r.attempt}`}
            aria-controls="attempt-panel"
            onClick={() => setShown(r.attempt)}
          >
            Attempt {r.attempt} {r.exit_code === 0 ? "" : `(exit ${r.exit_code})`}
          </button>
        ))}
      </div>
      {run && (
        <div role="tabpanel" id="attempt-panel" aria-labelledby={`attempt-tab-${shown}`} class="attempt">
          <dl class="facts">
            <dt>Exit code</dt>
            <dd data-testid="exit-code">{run.exit_code}</dd>
            <dt>Duration</dt>
            <dd>{duration(run.duration_ms)}</dd>
            <dt>Timed out</dt>
            <dd>{run.timed_out ? "yes" : "no"}</dd>
            <dt>Out of memory</dt>
            <dd>{run.oom_killed ? "yes" : "no"}</dd>
          </dl>
          <div class="mode" role="group" aria-label="Program view">
            <button type="button" aria-pressed={mode === "program"} onClick={() => setMode("program")}>
              Program
            </button>
            <button type="button" aria-pressed={mode === "diff"} disabled={shown <= 1} onClick={() => setMode("diff")}>
              Diff against attempt {shown - 1}
            </button>
            <button type="button" onClick={() => typeof program === "string" && saveAs(new Blob([program]), `attempt-${shown}-program`)} disabled={typeof program !== "string"}>
              Download program
            </button>
          </div>
          {program instanceof Error && <p class="error">{program.message}</p>}
          {mode === "program" && typeof program === "string" && <pre tabIndex={0} class="program">{program}</pre>}
          {mode === "diff" &&
            (typeof program === "string" && typeof previous === "string" ? (
              <ProgramDiff before={previous} after={program} label={`Attempt ${shown} against attempt ${shown - 1}`} />
            ) : previous instanceof Error ? (
              <p class="error">{previous.message}</p>
            ) : (
              <p aria-busy="true">Loading…</p>
            ))}
          <h3>Output</h3>
          <h4>stdout (last part)</h4>
          <pre tabIndex={0} class="text">{run.stdout_tail || "(empty)"}</pre>
          <h4>stderr (last part)</h4>
          <pre tabIndex={0} class="text">{run.stderr_tail || "(empty)"}</pre>
          <h3>Check verdicts</h3>
          {verdicts ? (
            <ul class="verdicts">
              {verdicts.map((v) => {
                const result = goal.checks.find((c: Check) => c.id === v.id)?.results.find((r) => r.attempt === shown);
                const findings = (result?.findings ?? []) as Finding[];
                return (
                  <li data-verdict={v.id}>
                    <code>{v.id}</code> <Verdict passed={v.passed} message={v.message} />
                    {findings.length > 0 && <FindingsTable findings={findings} check={v.id} />}
                  </li>
                );
              })}
            </ul>
          ) : (
            <p>Not checked yet.</p>
          )}
        </div>
      )}
    </section>
  );
}

type ArtifactList = Schemas["ArtifactList"];

export function Artifacts({ session, goal, version }: { session: Session; goal: Goal; version: string }) {
  const [list, setList] = useState<ArtifactList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ key: string; name: string; text: string } | null>(null);
  useEffect(() => {
    session.client
      .GET("/goals/{id}/artifacts", { params: { path: { id: goal.id } } })
      .then(({ data, error: e, response }) => (data ? setList(data) : setError(errorText(e, response.status))))
      .catch((e: unknown) => setError(errorText(e)));
  }, [goal.id, version]);
  const view = async (key: string, name: string, url: string) => {
    try {
      setOpen({ key, name, text: await (await fetchBytes(session, url)).text() });
    } catch (e) {
      setError(errorText(e));
    }
  };
  const download = async (name: string, url: string) => {
    try {
      saveAs(await fetchBytes(session, url), name);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const deliverable = goal.deliverable?.artifact;
  return (
    <section aria-labelledby="artifacts-h">
      <h2 id="artifacts-h">Deliverable and artifacts</h2>
      {goal.deliverable && (
        <p>
          Deliverable: <code>{goal.deliverable.name}</code>
          {deliverable ? ` from attempt ${deliverable.attempt}, sha256 ${deliverable.sha256}` : " (not delivered)"}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {list && list.artifacts.length === 0 && <p>No artifacts.</p>}
      {list && list.artifacts.length > 0 && (
        <table class="artifacts">
          <caption class="visually-hidden">Artifacts</caption>
          <Columns names={["Name", "Attempt", "Size", "sha256", "Actions"]} />
          <tbody>
            {list.artifacts.map((a) => {
              const key = `${a.attempt}/${a.name}`;
              return (
                <tr data-artifact={key}>
                  <td>
                    <code>{a.name}</code>
                  </td>
                  <td class="num">{a.attempt}</td>
                  <td class="num">{bytes(a.size)}</td>
                  <td>
                    <code class="sha">{a.sha256}</code>
                  </td>
                  <td>
                    <button type="button" onClick={() => view(key, a.name, a.url)} aria-label={`View ${a.name} of attempt ${a.attempt}`}>
                      View
                    </button>{" "}
                    <button type="button" onClick={() => download(a.name, a.url)} aria-label={`Download ${a.name} of attempt ${a.attempt}`}>
                      Download
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open && (
        <div class="viewer" aria-label={`${open.name} (${open.key})`} role="region">
          <h3>
            {open.name} <span class="hint">({open.key})</span>
          </h3>
          <FileView name={open.name} text={open.text} />
        </div>
      )}
    </section>
  );
}

export function SelfTest({ goal }: { goal: Goal }) {
  const st = goal.self_test as { ok: boolean; probes?: { ok: boolean; kind: string; probe: string; expected: string; failing_checks?: string[] }[] } | null;
  if (!st) return null;
  return (
    <section aria-labelledby="selftest-h">
      <h2 id="selftest-h">Self-test of the checks</h2>
      <p>{st.ok ? "Every probe was judged as expected: the checks can tell right from wrong." : "A probe was judged wrongly: the checks cannot be trusted."}</p>
      <table>
        <caption class="visually-hidden">Self-test probes</caption>
        <Columns names={["Probe", "Expected", "As expected", "Failing checks"]} />
        <tbody>
          {(st.probes ?? []).map((p) => (
            <tr>
              <td>{p.probe}</td>
              <td>{p.expected}</td>
              <td class={p.ok ? "pass" : "fail"}>{p.ok ? "yes" : "no"}</td>
              <td>{(p.failing_checks ?? []).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Cost({ goal }: { goal: Goal }) {
  const c = goal.cost;
  return (
    <section aria-labelledby="cost-h">
      <h2 id="cost-h">Cost and model calls</h2>
      <dl class="facts">
        <dt>Spend</dt>
        <dd>{usd(c.cost_usd)}</dd>
        <dt>Model calls</dt>
        <dd>{c.model_calls}</dd>
        <dt>Tokens in / out</dt>
        <dd>
          {c.tokens_in} / {c.tokens_out}
        </dd>
        <dt>Sandbox time</dt>
        <dd>{duration(c.sandbox_ms)}</dd>
        <dt>Wall time</dt>
        <dd>{duration(c.wall_time_ms)}</dd>
      </dl>
      <table>
        <caption class="visually-hidden">Model calls</caption>
        <Columns names={["State", "Attempt", "Model", "Tokens in / out", "Cost", "Latency", "Error"]} />
        <tbody>
          {goal.model_calls.map((m) => (
            <tr>
              <td>{m.state}</td>
              <td class="num">{m.attempt}</td>
              <td>
                {m.provider}/{m.model}
              </td>
              <td class="num">
                {m.tokens_in} / {m.tokens_out}
              </td>
              <td class="num">{usd(m.cost_usd)}</td>
              <td class="num">{duration(m.latency_ms)}</td>
              <td>{m.error_kind ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Receipt({ session, goal }: { session: Session; goal: Goal }) {
  const [result, setResult] = useState<ReceiptCheck | string | null>(null);
  if (!goal.receipt) return null;
  const verify = async () => {
    setResult(null);
    try {
      const [r, k] = await Promise.all([
        session.client.GET("/goals/{id}/receipt", { params: { path: { id: goal.id } } }),
        session.client.GET("/.well-known/loopsmith-receipt-keys"),
      ]);
      if (!r.data) return setResult(errorText(r.error, r.response.status));
      if (!k.data) return setResult(errorText(k.error, k.response.status));
      setResult(await checkReceipt(r.data as Record<string, unknown>, k.data.keys as PublishedKey[], goal.transitions));
    } catch (e) {
      setResult(errorText(e));
    }
  };
  return (
    <section aria-labelledby="receipt-h">
      <h2 id="receipt-h">Receipt</h2>
      <p>
        Signed by key <code>{String((goal.receipt as { key_id?: string }).key_id)}</code>. Checking it here uses the published keys, the signature and the
        tape's hash chain.
      </p>
      <button type="button" onClick={verify}>
        Verify the receipt
      </button>
      {typeof result === "string" && (
        <p class="error" role="alert">
          {result}
        </p>
      )}
      {result && typeof result === "object" && (
        <div role="status" class={result.ok ? "pass" : "fail"} data-testid="receipt-result">
          <strong>{result.ok ? "Receipt verified" : "Receipt NOT verified"}</strong>: signature {result.signature ? "valid" : "invalid"}, key {result.key}, tape{" "}
          {result.tape ? "matches" : "does not match"}.
          {result.problems.length > 0 && (
            <ul>
              {result.problems.map((p) => (
                <li>{p}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}

type Delivery = Schemas["WebhookDelivery"];

export function Deliveries({ session, goal, version }: { session: Session; goal: Goal; version: string }) {
  const [list, setList] = useState<Delivery[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () =>
    session.client
      .GET("/goals/{id}/deliveries", { params: { path: { id: goal.id } } })
      .then(({ data, error, response }) => (data ? setList(data.deliveries) : setNote(errorText(error, response.status))))
      .catch((e: unknown) => setNote(errorText(e)));
  useEffect(() => {
    void load();
  }, [goal.id, version]);
  if (!goal.webhook && (!list || list.length === 0)) return null;
  const redeliver = async (id: string) => {
    const { error, response } = await session.client.POST("/deliveries/{id}/redeliver", { params: { path: { id } } });
    setNote(response.ok ? "Redelivery queued." : errorText(error, response.status));
    void load();
  };
  return (
    <section aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Webhook deliveries</h2>
      {note && <p role="status">{note}</p>}
      {list && list.length === 0 && <p>None yet.</p>}
      {list && list.length > 0 && (
        <table>
          <caption class="visually-hidden">Webhook deliveries</caption>
          <Columns names={["Event", "Status", "Attempts", "Last answer", "Actions"]} />
          <tbody>
            {list.map((d) => {
              const last = d.log[d.log.length - 1];
              return (
                <tr>
                  <td>{d.event}</td>
                  <td>{d.status}</td>
                  <td class="num">{d.attempts}</td>
                  <td>{last ? (last.error ?? `HTTP ${last.status_code}`) : ""}</td>
                  <td>
                    <button type="button" onClick={() => redeliver(d.id)} aria-label={`Redeliver ${d.event}`}>
                      Redeliver
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
