import { Layout, type Viewer } from "../components/layout";

export function ErrorPage({
  status,
  title,
  message,
  canonical,
  viewer,
}: {
  status: number;
  title: string;
  message: string;
  canonical: string;
  viewer: Viewer | null;
}) {
  return (
    <Layout title={title} canonical={canonical} viewer={viewer}>
      <h1>{title}</h1>
      <p>{message}</p>
      <p class="meta">HTTP {status}</p>
      <p>
        <a href="/">Back to the stories</a>
      </p>
    </Layout>
  );
}
