// The goal console: sign in with an API key, then the tenant's goals, one goal, a submit form, and for
// the admin key the operator views. Everything comes from the public API (see session.ts).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { route } from "./format";
import { AdminPage } from "./pages/admin";
import { GoalPage } from "./pages/goal";
import { GoalsPage } from "./pages/goals";
import { SignIn } from "./pages/sign-in";
import { SubmitPage } from "./pages/submit";
import { forget, restore, type Session } from "./session";
import "./style.css";

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function App() {
  const [session, setSession] = useState<Session | null>(restore);
  const hash = useHash();
  const { path, query } = route(hash);
  useEffect(() => {
    const main = document.querySelector("main");
    if (main) main.focus();
  }, [path.join("/")]);
  if (!session) return <SignIn onSignedIn={setSession} />;
  const signOut = () => {
    forget();
    setSession(null);
    location.hash = "";
  };
  const admin = session.role === "admin";
  let page;
  if (admin) page = <AdminPage session={session} />;
  else if (path[0] === "goals" && path[1]) page = <GoalPage key={path[1]} session={session} id={path[1]} />;
  else if (path[0] === "submit") page = <SubmitPage session={session} />;
  else page = <GoalsPage session={session} query={query} />;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">LoopSmith</a>
        <nav aria-label="Console">
          {admin ? (
            <a href="#/admin">Dead letters</a>
          ) : (
            <>
              <a href="#/">Goals</a>
              <a href="#/submit">Submit a goal</a>
            </>
          )}
          {/* Other pages of this origin open in a tab of their own, without an opener: this tab's key (its
              sessionStorage) is not copied to them. */}
          {admin && (
            <a href="/admin/queues" target="_blank" rel="noopener noreferrer">
              Queues
            </a>
          )}
          <a href="/docs" target="_blank" rel="noopener noreferrer">
            API docs
          </a>
        </nav>
        <span class="who">{admin ? "admin key" : "tenant key"}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main tabIndex={-1}>{page}</main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
