// Everything a program produces must be storable: Postgres `text` refuses U+0000 and `jsonb` refuses both
// \u0000 and unpaired UTF-16 surrogates. A run's strings are made storable here, before they leave the
// sandbox package, and every replacement is said out loud (RunResult.notes) rather than done silently.

import { NUL_SYMBOL, storable } from "@loopsmith/core";

export { NUL_SYMBOL, storable, type Storable } from "@loopsmith/core";

/**
 * Makes the strings of one run storable, collecting a note per field that needed it. `what` names the
 * field as a reader of the tape would (stdout, stderr, artifact name ...).
 */
export class Sanitiser {
  readonly notes: string[] = [];

  /** `what` may be a function of the cleaned text (to name an artifact by the name it is stored under). */
  clean(what: string | ((cleaned: string) => string), s: string): string {
    const r = storable(s);
    const did: string[] = [];
    if (r.nul > 0) did.push(`${r.nul} NUL byte${r.nul === 1 ? "" : "s"} shown as ${NUL_SYMBOL} (U+2400)`);
    if (r.surrogates > 0) did.push(`${r.surrogates} unpaired UTF-16 surrogate${r.surrogates === 1 ? "" : "s"} shown as U+FFFD`);
    if (did.length > 0) {
      const label = typeof what === "function" ? what(r.text) : what;
      this.notes.push(`${label}: ${did.join(" and ")}, so that it can be stored`);
    }
    return r.text;
  }

  /** Invalid UTF-8 already became U+FFFD when the bytes were decoded; this says so. */
  invalidUtf8(what: string, sequences: number): void {
    if (sequences > 0) {
      this.notes.push(`${what}: ${sequences} invalid UTF-8 sequence${sequences === 1 ? "" : "s"} shown as U+FFFD`);
    }
  }
}
