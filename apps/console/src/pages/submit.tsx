// A form that posts a goal, for trying LoopSmith by hand: the objective, input files, checks picked from
// GET /checks with their parameters (each check's JSON Schema shown beside it), checker files, and any
// other field of POST /goals as JSON.
import { useEffect, useState } from "preact/hooks";
import type { CreateGoal, Schemas } from "@loopsmith/client";
import { errorText, type Session } from "../session";

type CatalogEntry = Schemas["CheckCatalogue"]["checks"][number];
interface Picked {
  params: string;
}

async function asFiles(list: FileList | null): Promise<{ name: string; content_base64: string }[]> {
  const files = Array.from(list ?? []);
  return Promise.all(
    files.map(async (f) => {
      const buf = new Uint8Array(await f.arrayBuffer());
      let bin = "";
      for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode(...buf.subarray(i, i + 0x8000));
      return { name: f.name, content_base64: btoa(bin) };
    }),
  );
}

export function SubmitPage({ session }: { session: Session }) {
  const [catalog, setCatalog] = useState<CatalogEntry[]>([]);
  const [objective, setObjective] = useState("");
  const [success, setSuccess] = useState("");
  const [picked, setPicked] = useState<Record<string, Picked>>({});
  const [extra, setExtra] = useState("{}");
  const [inputs, setInputs] = useState<FileList | null>(null);
  const [checkerFiles, setCheckerFiles] = useState<FileList | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    session.client
      .GET("/checks")
      .then(({ data }) => data && setCatalog(data.checks))
      .catch(() => undefined);
  }, []);

  const toggle = (c: CatalogEntry, on: boolean) =>
    setPicked((p) => {
      const next = { ...p };
      if (on) next[c.id] = { params: JSON.stringify(c.example ?? {}, null, 2) };
      else delete next[c.id];
      return next;
    });

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: string[] = [];
    const parse = (text: string, where: string): Record<string, unknown> | undefined => {
      try {
        const v = JSON.parse(text || "{}") as unknown;
        if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
        found.push(`${where}: a JSON object is needed`);
      } catch (err) {
        found.push(`${where}: not JSON (${(err as Error).message})`);
      }
      return undefined;
    };
    const more = parse(extra, "More fields");
    const checks = Object.entries(picked).map(([id, p]) => ({ id, params: parse(p.params, `Params of ${id}`) ?? {} }));
    if (found.length) return setProblems(found);
    setBusy(true);
    setProblems([]);
    try {
      const body = {
        ...more,
        objective,
        ...(success.trim() ? { success } : {}),
        ...(checks.length ? { checks } : {}),
        ...(inputs?.length ? { inputs: await asFiles(inputs) } : {}),
        ...(checkerFiles?.length ? { checker_files: await asFiles(checkerFiles) } : {}),
      } as CreateGoal;
      const { data, error, response } = await session.client.POST("/goals", { body });
      if (data) {
        location.hash = `#/goals/${data.id}`;
        return;
      }
      const details = (error as { error?: { details?: unknown } } | undefined)?.error?.details;
      setProblems([
        errorText(error, response.status),
        ...(Array.isArray(details) ? (details as { path: string; message: string }[]).map((d) => `${d.path}: ${d.message}`) : []),
      ]);
    } catch (err) {
      setProblems([errorText(err)]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h1>Submit a goal</h1>
      <form class="submit" onSubmit={submit}>
        <label for="objective">Objective</label>
        <textarea id="objective" rows={3} required value={objective} onInput={(e) => setObjective(e.currentTarget.value)} />
        <label for="success">Success (optional, in words)</label>
        <input id="success" value={success} onInput={(e) => setSuccess(e.currentTarget.value)} />
        <label for="inputs">Input files</label>
        <input id="inputs" type="file" multiple onChange={(e) => setInputs(e.currentTarget.files)} />
        <fieldset>
          <legend>Checks (the definition of done)</legend>
          {catalog.map((c) => (
            <div class="check-pick" data-check={c.id}>
              <input type="checkbox" id={`check-${c.id}`} checked={c.id in picked} onChange={(e) => toggle(c, e.currentTarget.checked)} />
              <label for={`check-${c.id}`}>
                <code>{c.id}</code>
              </label>
              <details>
                <summary>About {c.id}</summary>
                <p class="hint">{c.description}</p>
                <pre tabIndex={0} class="text">{JSON.stringify(c.params, null, 2)}</pre>
              </details>
              {picked[c.id] && (
                <>
                  <label for={`params-${c.id}`}>Params of {c.id} (JSON)</label>
                  <textarea
                    id={`params-${c.id}`}
                    rows={4}
                    value={picked[c.id]!.params}
                    onInput={(e) => {
                      const params = e.currentTarget.value;
                      setPicked((p) => ({ ...p, [c.id]: { params } }));
                    }}
                  />
                </>
              )}
            </div>
          ))}
        </fieldset>
        <label for="checker-files">Checker files (hidden material the checks read; never shown to a model)</label>
        <input id="checker-files" type="file" multiple onChange={(e) => setCheckerFiles(e.currentTarget.files)} />
        <label for="extra">More fields of POST /goals (JSON: model, budget, max_attempts, webhook…)</label>
        <textarea id="extra" rows={5} value={extra} onInput={(e) => setExtra(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? "Submitting…" : "Submit the goal"}
        </button>
      </form>
      {problems.length > 0 && (
        <div class="error" role="alert">
          <p>The goal was not accepted:</p>
          <ul>
            {problems.map((p) => (
              <li>{p}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
