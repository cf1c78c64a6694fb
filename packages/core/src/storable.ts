// Postgres `text` refuses U+0000 and `jsonb` refuses both \u0000 and unpaired UTF-16 surrogates. What a
// program produces (its output, its file names, the text of its deliverable quoted in a check's message or
// a model's prompt) goes through here before it is stored.

/** What NUL becomes: U+2400 SYMBOL FOR NULL, visibly a NUL to a person or a model reading the output. */
export const NUL_SYMBOL = "\u2400";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export interface Storable {
  text: string;
  /** NUL characters replaced by NUL_SYMBOL. */
  nul: number;
  /** Unpaired surrogates replaced by U+FFFD. */
  surrogates: number;
}

export function storable(s: string): Storable {
  let nul = 0;
  let surrogates = 0;
  let text = s.replace(/\0/g, () => {
    nul++;
    return NUL_SYMBOL;
  });
  text = text.replace(LONE_SURROGATE, () => {
    surrogates++;
    return "\uFFFD";
  });
  return { text, nul, surrogates };
}

