// How the console shows what a goal produced: a CSV as a table, JSON as a tree, anything else as text, a
// program with a line diff against the previous attempt's, and a check's findings as a table.
import { diffLines } from "diff";
import { parseCsv } from "../csv";

export function CsvTable({ text, label }: { text: string; label: string }) {
  const { rows, truncated } = parseCsv(text);
  const [head = [], ...body] = rows;
  return (
    <div class="scroll" tabIndex={0}>
      <table class="csv">
        <caption>{label}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {body.map((r) => (
            <tr>
              {r.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {truncated && <p class="hint">The first {body.length} rows; download the file for the rest.</p>}
    </div>
  );
}

export function JsonTree({ value, name }: { value: unknown; name?: string }) {
  const label = name !== undefined ? <span class="json-key">{name}: </span> : null;
  if (value === null || typeof value !== "object")
    return (
      <li>
        {label}
        <span class={`json-${value === null ? "null" : typeof value}`}>{JSON.stringify(value)}</span>
      </li>
    );
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return (
    <li>
      <details open={entries.length <= 50}>
        <summary>
          {label}
          <span class="json-summary">{summary}</span>
        </summary>
        <ul class="json">
          {entries.map(([k, v]) => (
            <JsonTree name={k} value={v} />
          ))}
        </ul>
      </details>
    </li>
  );
}

export function JsonView({ text }: { text: string }) {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return <pre tabIndex={0} class="text">{text}</pre>;
  }
  return (
    <ul class="json json-root">
      <JsonTree value={value} />
    </ul>
  );
}

export function FileView({ name, text }: { name: string; text: string }) {
  if (/\.csv$/i.test(name)) return <CsvTable text={text} label={name} />;
  if (/\.json$/i.test(name)) return <JsonView text={text} />;
  return <pre tabIndex={0} class="text">{text}</pre>;
}

export function ProgramDiff({ before, after, label }: { before: string; after: string; label: string }) {
  const parts = diffLines(before, after);
  return (
    <pre tabIndex={0} class="diff" aria-label={label}>
      {parts.map((p) => {
        const sign = p.added ? "+" : p.removed ? "-" : " ";
        const lines = p.value.replace(/\n$/, "").split("\n");
        return lines.map((l) => (
          <span class={p.added ? "added" : p.removed ? "removed" : "same"}>
            {p.added ? <ins>{`${sign} ${l}`}</ins> : p.removed ? <del>{`${sign} ${l}`}</del> : `${sign} ${l}`}
            {"\n"}
          </span>
        ));
      })}
    </pre>
  );
}

export interface Finding {
  where: string;
  input?: string;
  expected?: string;
  actual?: string;
  note?: string;
}

export function FindingsTable({ findings, check }: { findings: Finding[]; check: string }) {
  return (
    <table class="findings">
      <caption>Findings of {check}</caption>
      <Columns names={["Where", "Input", "Expected", "Actual", "Note"]} />
      <tbody>
        {findings.map((f) => (
          <tr>
            <td>{f.where}</td>
            <td>
              <code>{f.input ?? ""}</code>
            </td>
            <td>
              <code>{f.expected ?? ""}</code>
            </td>
            <td>
              <code>{f.actual ?? ""}</code>
            </td>
            <td>{f.note ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A table's column headings. */
export function Columns({ names }: { names: string[] }) {
  return (
    <thead>
      <tr>
        {names.map((n) => (
          <th scope="col">{n}</th>
        ))}
      </tr>
    </thead>
  );
}
