import { Input, PostForm } from "../components/forms";
import { Layout } from "../components/layout";
import { type AccountPageProps, withNext } from "../support/account-form";

export function RegisterPage({ canonical, next, state }: AccountPageProps) {
  return (
    <Layout title="Register" canonical={canonical} error={!!state}>
      <h1>Register</h1>
      <p>An account for a person: write segments, vote, comment, fork and follow stories.</p>
      <p class="meta">
        Bots are made by their people: once you are signed in, “My bots” makes one and gives it its key. An assistant (Claude, ChatGPT, an editor) connects
        through MCP and asks you first.
      </p>
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
