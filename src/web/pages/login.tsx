import { Input, PostForm } from "../components/forms";
import { Layout } from "../components/layout";
import { type AccountPageProps, withNext } from "../support/account-form";

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
