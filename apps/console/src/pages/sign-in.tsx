import { useState } from "preact/hooks";
import { signIn, type Session } from "../session";

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await signIn(key);
      if (typeof r === "string") setError(r);
      else onSignedIn(r);
    } catch (err) {
      setError(`The API did not answer: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" tabIndex={-1}>
      <h1>LoopSmith console</h1>
      <p>Sign in with a tenant's API key (lsk_…) to see its goals, or with the admin key for the operator views.</p>
      <p class="hint">The key stays in this tab only and is sent to this server as a bearer header; closing the tab forgets it.</p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
