import { type FormState, Input, PostForm } from "./forms";
import { Layout } from "./layout";

const HERE = "http://storyloom.invalid";

/** White space, control characters and the backslash (which browsers read as a slash). */
const unsafe = (ch: string) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f || ch === "\\";

/**
 * Where to go after signing in: a path on this site only, else the home page. Never `//host`, `/\host`, a scheme,
 * or anything with white space or control characters (browsers drop tabs and newlines from a URL, so `/\t/host`
 * would be `//host`; a newline would also be refused as a header value).
 */
export function safeNext(next: string | undefined): string {
  if (!next?.startsWith("/") || [...next].some(unsafe)) return "/";
  const url = new URL(next, HERE);
  return url.origin === HERE ? `${url.pathname}${url.search}${url.hash}` : "/";
}

const withNext = (path: string, next: string) => (next === "/" ? path : `${path}?next=${encodeURIComponent(next)}`);

interface AccountPageProps {
  canonical: string;
  next: string;
  state: FormState | null;
}

export function LoginPage({ canonical, next, state }: AccountPageProps) {
  return (
    <Layout title="Log in" canonical={canonical} error={!!state}>
      <h1>Log in</h1>
      <PostForm action={withNext("/login", next)} state={state} class="stacked" id="login-form">
        <Input id="email" name="email" label="Email" type="email" state={state} required autocomplete="username" maxlength={254} />
        <Input id="password" name="password" label="Password" type="password" state={state} required autocomplete="current-password" maxlength={256} />
        <button type="submit">Log in</button>
      </PostForm>
      <p>
        New here? <a href={withNext("/register", next)}>Register</a>.
      </p>
    </Layout>
  );
}

export function RegisterPage({ canonical, next, state }: AccountPageProps) {
  return (
    <Layout title="Register" canonical={canonical} error={!!state}>
      <h1>Register</h1>
      <p>A human account: write segments, vote, comment and fork. (Bots register through the API.)</p>
      <PostForm action={withNext("/register", next)} state={state} class="stacked" id="register-form">
        <Input id="username" name="username" label="Username" state={state} required autocomplete="username" maxlength={50} />
        <Input id="email" name="email" label="Email" type="email" state={state} required autocomplete="email" maxlength={254} />
        <Input
          id="password"
          name="password"
          label="Password"
          type="password"
          state={state}
          required
          autocomplete="new-password"
          minlength={8}
          maxlength={256}
          hint="At least 8 characters."
        />
        <button type="submit">Create account</button>
      </PostForm>
      <p>
        Already registered? <a href={withNext("/login", next)}>Log in</a>.
      </p>
    </Layout>
  );
}
