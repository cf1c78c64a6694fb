/** Parsed exposition lines: name, labels, value. */
export function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const l of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels are exactly `labels` (plus `app`), or undefined. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels);
  return samples(text).find(
    (s) => s.name === name && want.every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).filter((k) => k !== "app").length === want.filter(([k]) => k !== "app").length,
  )?.value;
}
