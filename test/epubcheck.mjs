// `npm run test:epub [-- --port N --keep DIR]`: the EPUB exports as a reading system and the EPUB
// validator see them. A `wrangler dev` of its own (test/browser/harness.mjs) is given a path worth checking: a story
// whose text carries what XML must escape or cannot hold (`&`, `<`, quotes, control characters, emoji, right-to-left
// text), 55 segments on its main line (two chapters), a fork by a bot (a chapter per fork crossed), a segment a
// moderator hid, and a story in Chinese. Each export is then
//   - validated by Debian's `epubcheck` (installed here when missing, as root, as .ci/run does): no fatal error, no
//     error and no warning;
//   - opened by a maintained EPUB reader from npm (`epub2`): its title, language and authors, its spine, its table of
//     contents (one entry per chapter) and the text of its chapters, hidden text only in the copy of who may read it.
// Prints one line per check and "N passed, M failed" last; exits 1 when any failed. `--keep DIR` leaves the files there.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { EPub } from "epub2";
import { freePort, words } from "../bench/lib.mjs";
import { assert, checks, cleanup, startWorker } from "./browser/harness.mjs";

const { values: opt } = parseArgs({ options: { port: { type: "string" }, keep: { type: "string" } } });
const JAR = "/usr/share/java/epubcheck.jar";

/** Debian's epubcheck (a Java program): installed when missing, as root; otherwise an error that says how. */
function ensureEpubcheck() {
  if (existsSync(JAR)) return;
  const how = "apt-get update && apt-get install -y epubcheck";
  if (process.getuid?.() !== 0) throw new Error(`epubcheck is missing and this is not root: install it with \`${how}\` (as root), then run this again`);
  console.log(`epubcheck is missing: ${how}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "epubcheck"]]) spawnSync("apt-get", args, { stdio: "inherit", env });
  if (!existsSync(JAR)) throw new Error(`could not install epubcheck (\`${how}\` failed)`);
}

/** epubcheck's messages on a file, from its JSON report: [{severity, id, message, locations}]. */
function epubcheck(file) {
  const report = `${file}.json`;
  const run = spawnSync("java", ["-jar", JAR, file, "--json", report], { encoding: "utf8" });
  if (!existsSync(report)) throw new Error(`epubcheck wrote no report (exit ${run.status}): ${run.stderr || run.stdout}`);
  return JSON.parse(readFileSync(report, "utf8")).messages.map((m) => ({
    severity: m.severity,
    id: m.ID,
    message: m.message,
    where: m.locations.map((l) => `${l.path}:${l.line}`).join(", "),
  }));
}

/** No fatal error, no error, no warning (epubcheck's INFO and USAGE lines are advice, printed only). */
function validOf(file) {
  const messages = epubcheck(file);
  const bad = messages.filter((m) => ["FATAL", "ERROR", "WARNING"].includes(m.severity));
  assert(bad.length === 0, `epubcheck: ${bad.map((m) => `${m.severity} ${m.id} ${m.message} (${m.where})`).join("; ")}`);
  return `epubcheck: no errors or warnings${messages.length ? ` (${messages.length} notes)` : ""}`;
}

/** A chapter's text as a reading system renders it: tags dropped, entities decoded, white space collapsed. */
const readable = (html) =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

async function opened(file) {
  const book = await EPub.createAsync(file);
  const chapters = [];
  for (const item of book.flow) chapters.push({ id: item.id, text: readable(await book.getChapterAsync(item.id)) });
  return { book, chapters, text: chapters.map((c) => c.text).join("\n") };
}

async function main() {
  ensureEpubcheck();
  const dir = opt.keep ?? mkdtempSync(path.join(tmpdir(), "storyloom-epub-"));
  mkdirSync(dir, { recursive: true });
  const lifted = Object.fromEntries(
    ["SEGMENTS_PER_HOUR", "SEGMENTS_PER_BRANCH_PER_HOUR", "SEGMENTS_PER_DAY", "STORIES_PER_HOUR", "BRANCHES_PER_HOUR"].map((n) => [`LIMIT_${n}`, "100000"]),
  );
  const port = opt.port ? Number(opt.port) : await freePort();
  const worker = await startWorker({ port, vars: { ...lifted, PUBLIC_ORIGIN: `http://127.0.0.1:${port}` } });
  const api = async (p, { token, body, method } = {}) => {
    const res = await fetch(`${worker.origin}/api/v1${p}`, {
      method: method ?? (body ? "POST" : "GET"),
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const save = async (p, name, token) => {
    const res = await fetch(`${worker.origin}/api/v1${p}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    const file = path.join(dir, name);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return file;
  };
  const t = checks();
  try {
    const owner = await api("/auth/register", {
      body: { username: "harbourmaster", email: "hm@example.com", password: "correct horse battery", user_type: "human" },
    });
    const token = owner.access_token;
    const bot = (await api("/auth/bot/register", { body: { name: "TideBot", model: "test-model" } })).data;
    const botToken = (await api("/auth/bot/login", { body: { api_key: bot.api_key } })).access_token;
    // What XML must escape, emoji, right-to-left text; in a segment also two control characters (dropped from the XML).
    const plain = `Tom & "Jerry" <b>bold</b> 'quoted' control emoji 🌊 and עברית text`;
    const hostile = plain.replace("control", "\u0001control\u0007");
    const story = (
      await api("/stories", {
        token,
        body: {
          title: "The Tide & the <Harbour>",
          // Titles and backgrounds refuse control characters; segments keep them.
          background: `A harbour town where the tide never comes back.\n${plain}`,
          starter: "Once upon a time.",
          initial_segments: [words(5, "a"), words(5, "b"), hostile],
          language: "en",
          min_length: 3,
          max_length: 500,
        },
      })
    ).data;
    const main = story.main_branch_id;
    for (let i = 5; i <= 55; i++) await api(`/branches/${main}/segments`, { token, body: { content: `${words(8, `s${i}w`)}\nA second line of ${i}.` } });
    const fork = (await api(`/stories/${story.id}/branches`, { token: botToken, body: { title: "Deeper & darker", initial_segment: words(6, "forkw") } })).data;
    const secret = (await api(`/branches/${fork.id}/segments`, { token: botToken, body: { content: words(6, "secretw") } })).data;
    const moderator = await api("/auth/register", {
      body: { username: "moderator", email: "mod@example.com", password: "correct horse battery", user_type: "human" },
    });
    await worker.sql(`UPDATE users SET role = 'moderator' WHERE id = '${moderator.user.id}'`);
    await api(`/admin/segments/${secret.id}/hide`, { token: moderator.access_token, body: { reason: "spoiler" } });
    const zh = (
      await api("/stories", {
        token,
        body: {
          title: "潮汐之城",
          background: "一座潮水再也没有回来的港口小城。",
          starter: "很久以前。",
          initial_segments: ["潮水退去了很远很远。", "灯塔的守护者望着大海。", "没有人记得为什么。"],
          language: "zh",
          min_length: 3,
          max_length: 500,
        },
      })
    ).data;

    const files = {
      fork: await save(`/branches/${fork.id}/export.epub`, "fork.epub"),
      forkAuthor: await save(`/branches/${fork.id}/export.epub`, "fork-author.epub", botToken),
      zh: await save(`/branches/${zh.main_branch_id}/export.epub`, "zh.epub"),
    };
    const md = readFileSync(await save(`/branches/${fork.id}/export.md`, "fork.md"), "utf8");

    await t.check("a fork's EPUB (57 segments, two forks' chapters, text to escape) passes epubcheck", () => validOf(files.fork));
    await t.check("its author's copy, with the hidden segment in it, passes epubcheck", () => validOf(files.forkAuthor));
    await t.check("a Chinese story's EPUB passes epubcheck", () => validOf(files.zh));

    await t.check("epub2 reads the fork's metadata: title, language, the first author", async () => {
      const { book } = await opened(files.fork);
      assert(book.metadata.title === "The Tide & the <Harbour>", `title ${JSON.stringify(book.metadata.title)}`);
      assert(book.metadata.language === "en", `language ${book.metadata.language}`);
      assert(book.metadata.creator === "harbourmaster", `creator ${JSON.stringify(book.metadata.creator)}`);
      return `"${book.metadata.title}" by ${book.metadata.creator}, ${book.metadata.language}`;
    });
    await t.check("epub2 reads its table of contents: title page, foreword, a chapter per 50 segments and per fork crossed", async () => {
      const { book } = await opened(files.fork);
      const toc = book.toc.map((e) => e.title);
      const expected = [
        "The Tide & the <Harbour>",
        "Foreword",
        "Chapter 1: main line, #1–#50",
        "Chapter 2: main line, #51–#55",
        "Chapter 3: Deeper & darker, #56",
      ];
      assert(JSON.stringify(toc) === JSON.stringify(expected), `toc ${JSON.stringify(toc)}`);
      // The spine reads the contents (nav.xhtml) after the title page.
      assert(book.flow.length === expected.length + 1, `${book.flow.length} documents in the spine`);
      return toc.slice(2).join(" | ");
    });
    await t.check(
      "epub2 reads the chapters' text in reading order, escaped text as written, control characters dropped, the hidden segment left out",
      async () => {
        const { text, chapters } = await opened(files.fork);
        assert(text.includes(plain), "the hostile segment is not there as written");
        assert(text.indexOf(words(8, "s5w")) < text.indexOf(words(8, "s55w")), "segments out of order");
        assert(chapters[5].text.includes(words(6, "forkw")), "the fork's segment is not in its chapter");
        assert(!text.includes("secretw0"), "the hidden segment is in a reader's copy");
        assert(text.includes("1 segment hidden by moderators left out"), "the title page does not say a segment was left out");
      },
    );
    await t.check("epub2 reads the hidden segment in its author's copy, marked", async () => {
      const { text } = await opened(files.forkAuthor);
      assert(text.includes(words(6, "secretw")), "the hidden segment is not in its author's copy");
      assert(text.includes("Hidden by a moderator"), "the hidden segment is not marked");
    });
    await t.check("epub2 reads the Chinese story: language zh, its title and text", async () => {
      const { book, text } = await opened(files.zh);
      assert(book.metadata.language === "zh", `language ${book.metadata.language}`);
      assert(book.metadata.title === "潮汐之城", `title ${book.metadata.title}`);
      assert(text.includes("灯塔的守护者望着大海。"), "the Chinese text is missing");
    });
    await t.check("the Markdown export: the title escaped, the chapters' headings, the hidden segment left out", () => {
      assert(md.startsWith("# The Tide \\& the \\<Harbour\\>\n"), md.slice(0, 80));
      for (const heading of ["## Chapter 1 · main line, #1–#50", "## Chapter 2 · main line, #51–#55", "## Chapter 3 · Deeper \\& darker, #56"])
        assert(md.includes(`\n${heading}\n`), `no heading ${heading}`);
      assert(!md.includes("secretw0"), "the hidden segment is in the Markdown");
    });
  } catch (err) {
    t.fail("setting up the exports", err);
    console.log(worker.log().slice(-3000));
  } finally {
    await worker.stop();
  }
  return t.report();
}

const failed = await main().catch((err) => {
  console.error(err);
  return 1;
});
cleanup();
process.exit(failed ? 1 : 0);
