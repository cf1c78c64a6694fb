// The operator's view, for the admin key: goals parked in errored (dead letters) with a retry each, and a
// link to the queue dashboard.
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "@loopsmith/client";
import { age } from "../format";
import { errorText, type Session } from "../session";
import { Columns } from "../parts/viewers";

type DeadLetter = Schemas["DeadLetter"];

export function AdminPage({ session }: { session: Session }) {
  const [letters, setLetters] = useState<DeadLetter[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () =>
    session.client
      .GET("/admin/dead-letters")
      .then(({ data, error, response }) => (data ? setLetters(data.dead_letters) : setNote(errorText(error, response.status))))
      .catch((e: unknown) => setNote(errorText(e)));
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 5000);
    return () => clearInterval(t);
  }, []);
  const retry = async (id: string) => {
    const { data, error, response } = await session.client.POST("/admin/dead-letters/{id}/retry", { params: { path: { id } } });
    setNote(data ? `Goal ${id} resumed in ${data.state}.` : errorText(error, response.status));
    void load();
  };
  return (
    <section>
      <h1>Dead letters</h1>
      <p>
        Goals parked in <code>errored</code> after their infrastructure kept failing. A retry resumes the step that failed. The queues are on the{" "}
        <a href="/admin/queues" target="_blank" rel="noopener noreferrer">
          queue dashboard
        </a> (it asks for the admin key again).
      </p>
      {note && <p role="status">{note}</p>}
      {letters && letters.length === 0 && <p>None.</p>}
      {letters && letters.length > 0 && (
        <table>
          <caption class="visually-hidden">Dead letters</caption>
          <Columns names={["Goal", "Tenant", "Errored in", "Error", "Tries", "When", "Actions"]} />
          <tbody>
            {letters.map((d) => (
              <tr data-goal={d.goal_id}>
                <td>
                  <code>{d.goal_id}</code>
                  <div class="hint">{d.objective.slice(0, 120)}</div>
                </td>
                <td>
                  <code>{d.tenant_id}</code>
                </td>
                <td>{d.errored_in}</td>
                <td>
                  {d.error_code ?? ""} {d.error}
                </td>
                <td class="num">{d.tries}</td>
                <td>{age(d.errored_at)}</td>
                <td>
                  <button type="button" onClick={() => retry(d.goal_id)} aria-label={`Retry goal ${d.goal_id}`}>
                    Retry
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
