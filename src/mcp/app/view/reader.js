// The Storyloom reader inside an assistant (an MCP App): the story as a reader sees it, the choices at each fork,
// votes, follows, bookmarks and a composer, each action one of the server's own tools called through the host.
// Built into one HTML file by scripts/build-mcp-app.mjs; every text it shows is set as text, never as markup.
import { contentLength, lengthUnit } from "../../../lib/length-rule.ts";
import { connect, reportSize } from "./bridge.js";

const PAGE = 50;
const $ = (id) => document.getElementById(id);

/** An element with attributes (`on…` are listeners) and children (strings become text). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

const state = {
  bridge: null,
  /** The arguments of the tool call the host framed the app for (to read again when a host left its data out). */
  args: null,
  view: null,
  search: null,
  canWrite: true,
  whyNot: "",
  busy: false,
};

// ---- the host's theme ---------------------------------------------------------------------------------------

function applyContext(ctx) {
  if (!ctx) return;
  if (ctx.theme === "dark" || ctx.theme === "light") {
    document.documentElement.dataset.theme = ctx.theme;
    document.documentElement.style.colorScheme = ctx.theme;
  }
  const vars = ctx.styles?.variables;
  if (vars && typeof vars === "object") {
    for (const [name, value] of Object.entries(vars))
      if (name.startsWith("--") && typeof value === "string") document.documentElement.style.setProperty(name, value);
  }
}

// ---- talking to the server through the host ------------------------------------------------------------------

/** An error in words: the API's code and message, and what to do (the tool's text says it). */
function sayError(err) {
  const box = $("error");
  box.replaceChildren();
  if (!err) return;
  box.append(h("p", {}, err));
}

const status = (text) => {
  $("status").textContent = text;
};

/** A failed call's words: a tool's error result, or the host's refusal (a grant without writing is refused so). */
function errorText(result, thrown) {
  if (thrown) {
    const text = `${thrown.message || thrown}`;
    if (/insufficient_scope/.test(text)) {
      setReadOnly("This connection was approved to read only: approve writing for this app to vote, follow, bookmark and write.");
      return `FORBIDDEN: ${state.whyNot}`;
    }
    return `The host could not reach Storyloom: ${text}`;
  }
  const e = result?.structuredContent?.error;
  const text = result?.content?.find((c) => c.type === "text")?.text;
  return text || (e ? `${e.code}: ${e.message}` : "Something went wrong.");
}

/** Calls one of the server's tools through the host; the result, or null after saying what went wrong. */
async function callTool(name, args) {
  let result;
  try {
    result = await state.bridge.request("tools/call", { name, arguments: args });
  } catch (err) {
    sayError(errorText(null, err));
    return null;
  }
  if (result?.isError) {
    sayError(errorText(result));
    return null;
  }
  sayError(null);
  return result;
}

/** A tool's data: its structured content, else the JSON of its text (hosts deliver one or the other). */
function dataOf(result) {
  if (result?.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
  for (const block of result?.content ?? []) {
    if (block.type !== "text") continue;
    try {
      const parsed = JSON.parse(block.text);
      if (parsed && typeof parsed === "object") return parsed;
    } catch {}
  }
  return null;
}

// ---- what the host framed the app for -------------------------------------------------------------------------

async function onToolResult(result) {
  if (result.isError) {
    sayError(errorText(result));
    return;
  }
  const data = dataOf(result);
  const args = state.args || {};
  if (data?.results && "count" in data) return showSearch(data);
  if (data?.story && data?.tree) return open({ story_id: data.story.id });
  if (data?.branch && Array.isArray(data?.segments)) return open({ branch_id: data.branch.id, page: pageOf((data.segments[0]?.sequence_order ?? 1) - 1) });
  // A host that gave the text alone: read again from the call's own arguments.
  if (args.branch_id) return open({ branch_id: args.branch_id, page: pageOf(args.after ?? 0) });
  if (args.story_id) return open({ story_id: args.story_id });
  if (args.q) {
    const again = await callTool("search", args);
    if (again) return showSearch(dataOf(again));
    return;
  }
  const text = result.content?.find((c) => c.type === "text")?.text;
  if (text) $("story").replaceChildren(h("p", { class: "plain" }, text));
}

const pageOf = (after) => Math.floor(after / PAGE) + 1;

/** Opens a page of a branch (or of a story's main line) in the reader. */
async function open(args) {
  status("Loading…");
  const result = await callTool("reader_view", args);
  if (!result) return status("");
  const view = dataOf(result);
  state.view = view;
  state.search = null;
  if (view.viewer && !view.viewer.can_write) setReadOnly(view.viewer.why_not);
  render();
  status(`${view.branch.title}: page ${view.page} of ${view.pages}.`);
}

// ---- drawing ----------------------------------------------------------------------------------------------------

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const who = (s) => (s.author_type === "bot" ? "bot" : "human");

function labels(story) {
  const items = [h("li", { class: `label rating-${story.rating}` }, `Rated ${story.rating}`)];
  if (story.authorship) items.push(h("li", { class: "label" }, story.authorship === "mixed" ? "humans and bots" : `by ${story.authorship}s`));
  for (const w of story.warnings ?? []) items.push(h("li", { class: "label warning" }, `Warning: ${w}`));
  for (const t of story.tags ?? []) items.push(h("li", { class: "label tag" }, `#${t}`));
  return h("ul", { class: "labels", "aria-label": "Labels" }, items);
}

function render() {
  const v = state.view;
  const root = $("story");
  if (!v) return;
  const followId = v.following?.branch;
  root.replaceChildren(
    h(
      "header",
      { class: "head" },
      h("h1", {}, v.story.title),
      h("p", { class: "branch-line" }, v.branch.is_main ? "Main line" : `Branch: ${v.branch.title}`, ` · ${plural(v.length, "segment")}`),
      labels(v.story),
      h(
        "button",
        {
          type: "button",
          class: "quiet",
          "aria-pressed": followId ? "true" : "false",
          disabled: !state.canWrite,
          onclick: () => toggleFollow(),
        },
        followId ? "Following this branch" : "Follow this branch",
      ),
    ),
    h("ol", { class: "path", start: v.segments[0]?.sequence_order ?? 1, "aria-label": "The story so far" }, v.segments.map(segmentItem)),
    pager(v),
    composer(v),
  );
}

function segmentItem(s) {
  const mark = who(s);
  const children = [];
  if (s.crossing) children.push(h("p", { class: "crossing" }, `The path turns here into “${s.crossing.title ?? "a hidden branch"}”.`));
  children.push(
    h(
      "p",
      { class: "byline" },
      h("span", { class: "seq" }, `#${s.sequence_order}`),
      " ",
      h("span", { class: "writer" }, s.author_name || "someone"),
      " ",
      h("span", { class: `mark ${mark}`, title: mark === "bot" ? "Written by a bot" : "Written by a person" }, mark === "bot" ? "bot" : "human"),
    ),
  );
  children.push(h("p", { class: s.hidden ? "text hidden" : "text" }, s.hidden ? "A moderator hid this segment." : s.content));
  const score = h("span", { class: "score", "aria-label": `Score ${s.score}` }, String(s.score));
  children.push(
    h(
      "div",
      { class: "actions" },
      h(
        "button",
        {
          type: "button",
          "aria-pressed": s.my_vote === 1 ? "true" : "false",
          "aria-label": `Vote up segment ${s.sequence_order}`,
          disabled: !state.canWrite,
          onclick: () => castVote(s, 1),
        },
        "▲",
      ),
      score,
      h(
        "button",
        {
          type: "button",
          "aria-pressed": s.my_vote === -1 ? "true" : "false",
          "aria-label": `Vote down segment ${s.sequence_order}`,
          disabled: !state.canWrite,
          onclick: () => castVote(s, -1),
        },
        "▼",
      ),
      h(
        "button",
        { type: "button", class: "quiet", "aria-pressed": s.bookmark_id ? "true" : "false", disabled: !state.canWrite, onclick: () => toggleBookmark(s) },
        s.bookmark_id ? "Bookmarked" : "Bookmark",
      ),
    ),
  );
  if (s.choices?.length) {
    children.push(
      h(
        "nav",
        { class: "choices", "aria-label": `Other ways on from segment ${s.sequence_order}` },
        h("p", { class: "choices-head" }, "Other ways on from here"),
        h(
          "ul",
          {},
          s.choices.map((c) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "link", onclick: () => open({ branch_id: c.id, page: pageOf(c.fork_sequence) }) },
                `${c.title ?? "A hidden branch"} (${plural(c.segments_count, "segment")} on)`,
              ),
            ),
          ),
        ),
      ),
    );
  }
  return h("li", { class: "segment", id: `seg-${s.id}` }, h("article", { "aria-label": `Segment ${s.sequence_order}` }, children));
}

function pager(v) {
  if (v.pages <= 1) return h("span", { hidden: true });
  const go = (page) => open({ branch_id: v.branch.id, page });
  return h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    h("button", { type: "button", disabled: v.page <= 1, onclick: () => go(v.page - 1) }, "Previous page"),
    h("span", {}, `Page ${v.page} of ${v.pages}`),
    h("button", { type: "button", disabled: v.page >= v.pages, onclick: () => go(v.page + 1) }, "Next page"),
  );
}

/** A language's name in the reader's own language ("English" for `en`), else its code. */
function languageName(code) {
  try {
    return new Intl.DisplayNames([navigator.language || "en"], { type: "language" }).of(code) ?? code;
  } catch {
    return code;
  }
}

function composer(v) {
  const { language, min_length: min, max_length: max } = v.story;
  const count = h("p", { id: "count", class: "count", "aria-live": "polite" });
  const text = h("textarea", { id: "next", rows: 5, disabled: !state.canWrite, "aria-describedby": "count why" });
  // A button, not a form's submit: a frame sandboxed without forms never fires a form's submit at all.
  const button = h("button", { type: "button", class: "primary", disabled: !state.canWrite, onclick: () => publish(text.value) }, "Publish");
  const update = () => {
    const n = contentLength(text.value, language);
    const unit = lengthUnit(language, n);
    const rule = `between ${min} and ${max} ${lengthUnit(language)}`;
    count.textContent = n < min ? `${n} ${unit}: too short (${rule})` : n > max ? `${n} ${unit}: too long (${rule})` : `${n} ${unit} (${rule})`;
    count.classList.toggle("off", n < min || n > max);
  };
  text.addEventListener("input", update);
  // A count for a composer that cannot be used would only be noise.
  if (state.canWrite) update();
  const archived = v.story.status === "archived";
  const why = !state.canWrite ? state.whyNot : archived ? "This story is archived: it takes no new segments." : "";
  return h(
    "section",
    { class: "composer", "aria-labelledby": "compose" },
    h("h2", { id: "compose" }, "Write the next segment"),
    h("label", { for: "next" }, `Your segment, in ${languageName(language)}`),
    text,
    count,
    h("p", { id: "why", class: "why" }, why),
    button,
  );
}

function showSearch(data) {
  state.search = data;
  state.view = null;
  const root = $("story");
  const hits = data.results.map((hit) => {
    const story = hit.story;
    const title = hit.type === "story" ? story.title : `#${hit.segment.sequence_order} of “${hit.branch.title}” in “${story.title}”`;
    const target = hit.type === "story" ? { story_id: story.id } : { branch_id: hit.branch.id, page: pageOf(hit.segment.sequence_order - 1) };
    return h("li", {}, h("button", { type: "button", class: "link", onclick: () => open(target) }, title), h("p", { class: "snippet" }, hit.snippet));
  });
  root.replaceChildren(h("h1", {}, `${plural(data.count, "result")}`), h("ul", { class: "hits" }, hits));
  status(`${plural(data.count, "result")}.`);
}

function setReadOnly(why) {
  state.canWrite = false;
  state.whyNot = why || "This connection may only read.";
  if (state.view) render();
}

// ---- actions ------------------------------------------------------------------------------------------------

async function castVote(s, vote) {
  const result = await callTool("vote", { target_type: "segment", target_id: s.id, vote });
  if (!result) return;
  const data = dataOf(result);
  s.score = data?.new_score ?? s.score;
  s.my_vote = vote;
  replaceSegment(s);
  status(`Voted: segment ${s.sequence_order}'s score is now ${s.score}.`);
}

async function toggleBookmark(s) {
  const result = s.bookmark_id ? await callTool("remove_bookmark", { bookmark_id: s.bookmark_id }) : await callTool("bookmark_segment", { segment_id: s.id });
  if (!result) return;
  s.bookmark_id = s.bookmark_id ? null : dataOf(result)?.id;
  replaceSegment(s);
  status(s.bookmark_id ? `Bookmarked segment ${s.sequence_order}.` : `Bookmark on segment ${s.sequence_order} removed.`);
}

async function toggleFollow() {
  const v = state.view;
  const id = v.following?.branch;
  const result = id ? await callTool("unfollow", { follow_id: id }) : await callTool("follow", { target_type: "branch", target_id: v.branch.id });
  if (!result) return;
  v.following = { ...v.following, branch: id ? null : dataOf(result)?.id };
  render();
  status(id ? "No longer following this branch." : "Following this branch: its new segments reach your inbox.");
}

async function publish(content) {
  const v = state.view;
  if (state.busy) return;
  state.busy = true;
  status("Publishing…");
  try {
    const result = await callTool("write_segment", { branch_id: v.branch.id, content });
    if (!result) return status("");
    const written = dataOf(result);
    await open({ branch_id: v.branch.id, page: pageOf((written?.sequence_order ?? v.length + 1) - 1) });
    status(`Published as segment ${written?.sequence_order ?? ""}.`);
    document.getElementById(`seg-${written?.id}`)?.scrollIntoView({ block: "nearest" });
  } finally {
    state.busy = false;
  }
}

function replaceSegment(s) {
  const old = document.getElementById(`seg-${s.id}`);
  const focusLabel = document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent;
  const fresh = segmentItem(s);
  old?.replaceWith(fresh);
  // Keeps the keyboard where it was: the pressed button was replaced with its segment.
  const again = [...fresh.querySelectorAll("button")].find((b) => (b.getAttribute("aria-label") ?? b.textContent) === focusLabel);
  again?.focus();
}

// ---- start --------------------------------------------------------------------------------------------------

function onNotification(method, params) {
  if (method === "ui/notifications/tool-input") state.args = params.arguments ?? null;
  else if (method === "ui/notifications/tool-result") onToolResult(params);
  else if (method === "ui/notifications/host-context-changed") applyContext(params);
}

async function start() {
  // What the host says before the handshake is over waits for it (a tool result needs the bridge to read more).
  const early = [];
  let ready = false;
  const bridge = await connect({ name: "Storyloom reader", version: "1.0.0" }, (method, params) =>
    ready ? onNotification(method, params) : early.push([method, params]),
  );
  state.bridge = bridge;
  applyContext(bridge.hostContext);
  ready = true;
  for (const [method, params] of early.splice(0)) onNotification(method, params);
  reportSize(bridge.notify);
}

start().catch((err) => {
  sayError(`This app needs a host that shows MCP Apps: ${err?.message ?? err}`);
});
