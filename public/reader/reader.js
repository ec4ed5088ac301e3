// The web reader's one script (a static asset, no build step). The pages work without it; it adds:
// - tag suggestions in the story and preferences forms, from `GET /api/v1/tags?prefix=`;
// - the inbox page, live: it polls its status and draws itself again when something new came (`watchInbox`);
// - length counters: each <textarea data-count="ID"> shows, in <output id="ID">, its length under the story's rule
//   (counted by length-rule.js, compiled from the server's own src/lib/length-rule.ts) against the allowed range;
// - live updates of a branch page: <ol data-live="/api/v1/branches/{id}/live" data-after="N"> follows the branch's
//   WebSocket stream: new segments are appended at once, then replaced by the server's own rendering of them (with
//   their vote and fork forms for a signed-in reader); the turn indicator and the queue are redrawn; a lost
//   connection is resumed from the last sequence seen (`?after=`), so nothing is missed or shown twice. An archived
//   story (an `archived` frame, or a `hello` that says `archived: true`) shows "Archived" and is not reconnected to
//   when the server closes the socket;
// - copy buttons for a key shown once (My bots);
// - a limit's end in the reader's clock: <time datetime="ISO" data-local> shows the browser's local time, not UTC;
// - a signed-in reader's place on a path: <ol data-place="/branches/{id}/place" data-place-at="N"> keeps
//   the furthest segment (`data-sequence`, `data-segment`) whose end the reader has scrolled past, sent once the page
//   is left or hidden (a beacon to the page's own form route), only when it is beyond the place kept.
import { contentLength, lengthUnit } from "./length-rule.js";

// ---- a form that came back with an error: focus its message, so it is read out and in view ----

document.querySelector(".form-error")?.focus();

// ---- a moment in the reader's own clock: <time datetime="ISO" data-local> (a limit's end) ----

for (const time of document.querySelectorAll("time[data-local]")) localise(time);

/**
 * Says the time in the browser's time zone and way of writing it (the server wrote UTC): the hour and minute, with
 * the day when it is not today. A person reads "You can write again at 06:43", not a count of seconds.
 */
function localise(time) {
  const at = new Date(time.dateTime);
  if (Number.isNaN(at.getTime())) return;
  const today = at.toDateString() === new Date().toDateString();
  const format = today ? { hour: "2-digit", minute: "2-digit" } : { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };
  time.textContent = at.toLocaleString(undefined, format);
  time.title = at.toLocaleString(undefined, { dateStyle: "full", timeStyle: "short" });
}

// ---- a form is sent once: a second click while the first is on its way does nothing ----

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.dataset.sending) event.preventDefault();
  else form.dataset.sending = "true";
});
// A page restored from the back-forward cache may be sent again.
addEventListener("pageshow", (event) => {
  if (event.persisted) for (const form of document.querySelectorAll("form[data-sending]")) delete form.dataset.sending;
});

// ---- length counters ----

/** The rule of a text area: its own data attributes, or (the new-story form) the form's language and length fields. */
function ruleOf(area) {
  const form = area.form;
  const fromForm = !area.dataset.language && form?.elements.language;
  return {
    language: fromForm ? form.elements.language.value : area.dataset.language,
    min: Number(fromForm ? form.elements.min_length.value : area.dataset.min),
    max: Number(fromForm ? form.elements.max_length.value : area.dataset.max),
  };
}

function count(area) {
  const output = document.getElementById(area.dataset.count);
  if (!output) return;
  const { language, min, max } = ruleOf(area);
  const length = contentLength(area.value, language);
  const unit = lengthUnit(language, length);
  if (!area.value.trim()) {
    output.textContent = `Length: ${min}–${max} ${lengthUnit(language)}`;
    output.dataset.state = "empty";
    return;
  }
  const verdict = length < min ? ` · ${min - length} more needed` : length > max ? ` · ${length - max} too many` : " · ok";
  output.textContent = `${length} ${unit} (allowed ${min}–${max})${verdict}`;
  output.dataset.state = length < min ? "short" : length > max ? "long" : "ok";
}

// The new-story form: its length rule follows its language. The unit is said where the form says it
// ([data-length-unit]); a length field still at the suggestion for the old unit takes the new unit's (what a person
// typed is kept). Registered before the counters, so they count under the rule as it now stands.
const storyForm = document.getElementById("story-form");
if (storyForm?.elements.language) {
  const unitKey = (language) => (lengthUnit(language) === "characters" ? "defaultCharacters" : "defaultWords");
  let shown = storyForm.elements.language.value;
  storyForm.elements.language.addEventListener("change", () => {
    const language = storyForm.elements.language.value;
    for (const name of ["min_length", "max_length"]) {
      const field = storyForm.elements[name];
      if (field && field.value === field.dataset[unitKey(shown)]) field.value = field.dataset[unitKey(language)];
    }
    for (const unit of storyForm.querySelectorAll("[data-length-unit]")) unit.textContent = lengthUnit(language);
    shown = language;
  });
}

for (const area of document.querySelectorAll("textarea[data-count]")) {
  area.addEventListener("input", () => count(area));
  area.form?.addEventListener("change", () => count(area)); // the story form's rule fields
  area.form?.addEventListener("input", (event) => event.target.type === "number" && count(area)); // as a length is typed
  if (area.value || !area.dataset.language) count(area); // a typed text, or a rule the form's fields may have changed
}

// ---- tag suggestions: an <input data-suggest="/api/v1/tags" list="ID"> of tags separated by commas ----

for (const input of document.querySelectorAll("input[data-suggest]")) suggestTags(input);

/**
 * Fills the input's <datalist> with the existing tags that start like the tag being typed (the text after the last
 * comma), each offered as the whole field with that tag completed, so choosing one keeps the tags before it.
 */
function suggestTags(input) {
  const list = document.getElementById(input.getAttribute("list"));
  if (!list) return;
  let timer = 0;
  let asked = "";
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const text = input.value;
      const cut = Math.max(text.lastIndexOf(","), text.lastIndexOf("，"), text.lastIndexOf("、"));
      const before = cut < 0 ? "" : `${text.slice(0, cut + 1).trimEnd()} `;
      const prefix = text.slice(cut + 1).trimStart();
      if (!prefix || prefix === asked) return;
      asked = prefix;
      try {
        const res = await fetch(`${input.dataset.suggest}?prefix=${encodeURIComponent(prefix)}&limit=8`);
        if (!res.ok) return;
        const { data } = await res.json();
        list.replaceChildren(...data.tags.map((t) => Object.assign(document.createElement("option"), { value: `${before}${t.name}` })));
      } catch {
        // Suggestions are a help: without them the field works as typed.
      }
    }, 150);
  });
}

// ---- the inbox page, live: it asks its status every few seconds and, when something came, draws itself again ----

const inbox = document.getElementById("inbox-items");
if (inbox?.dataset.status) watchInbox(inbox.dataset.status, inbox.dataset.latest ?? "");

/**
 * A poll, not a stream: `/inbox/status` is one small read (its ETag answers an unchanged one 304), and an inbox
 * moves when the fan-out writes it, which no branch's stream sees. On a change the page is fetched again and its
 * list swapped in whole (the server renders every item), the items not seen before marked new, the header's count
 * too. A hidden tab does not ask. The badge says "Connecting…" until the status has answered (or failed) once: the
 * first ask is at once, so the page never calls itself offline before it has tried.
 */
function watchInbox(statusUrl, shownLatest) {
  const POLL_MS = 5000;
  let latest = shownLatest;
  let unread = null;
  const say = (text) => {
    const badge = document.getElementById("live-status");
    if (!badge) return;
    badge.hidden = false;
    badge.textContent = text;
  };
  const offline = (yes) => say(yes ? "Offline" : "Live");
  say("Connecting…");
  const tick = async () => {
    if (!document.hidden) {
      try {
        const res = await fetch(statusUrl, { headers: { accept: "application/json" } });
        if (!res.ok) throw new Error(`status ${res.status}`);
        const now = await res.json();
        if ((now.latest ?? "") !== latest || (unread !== null && now.unread_count !== unread)) await redraw();
        latest = now.latest ?? "";
        unread = now.unread_count;
        offline(false);
      } catch {
        offline(true);
      }
    }
    setTimeout(tick, POLL_MS);
  };
  tick();
}

async function redraw() {
  const res = await fetch(location.href, { headers: { accept: "text/html" }, cache: "no-store" });
  if (!res.ok) return;
  const fetched = new DOMParser().parseFromString(await res.text(), "text/html");
  const fresh = fetched.getElementById("inbox");
  const shown = document.getElementById("inbox");
  if (!fresh || !shown) return;
  const key = (item) => `${item.id} ${item.querySelector("a")?.textContent}`;
  const seen = new Set([...shown.querySelectorAll(".inbox-item")].map(key));
  for (const item of fresh.querySelectorAll(".inbox-item")) if (!seen.has(key(item))) item.classList.add("new");
  shown.replaceWith(document.adoptNode(fresh));
  const link = fetched.getElementById("inbox-link");
  if (link) document.getElementById("inbox-link")?.replaceWith(document.adoptNode(link));
}

// ---- live updates of a branch page ----

const list = document.querySelector("ol[data-live]");
if (list) follow(list);

function follow(list) {
  const status = document.getElementById("live-status");
  const turns = document.getElementById("turn-queue");
  let after = Number(list.dataset.after) || 0;
  let retry = 1000;
  let members = [];
  let current = null;
  let resumesAt = null;
  let archived = false;

  const show = (text) => {
    if (!status) return;
    status.hidden = false;
    status.textContent = text;
  };

  const connect = () => {
    const url = new URL(`${list.dataset.live}?after=${after}`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url);
    socket.addEventListener("open", () => {
      retry = 1000;
      show("Live");
    });
    socket.addEventListener("message", (event) => {
      const frame = JSON.parse(event.data);
      if (frame.type === "segment") {
        after = Math.max(after, frame.segment.sequence_order);
        append(list, frame.segment);
        completeLater(frame.segment.id);
        return;
      }
      // A moderator hid a segment: its text leaves the page at once; restored, the server's rendering comes back.
      if (frame.type === "hidden" && frame.target_type === "segment") {
        const text = document.querySelector(`#s-${CSS.escape(frame.id)} .text`);
        if (text) text.replaceChildren(el("em", "hidden by a moderator"));
        return;
      }
      if (frame.type === "restored") {
        completeLater(frame.segment.id);
        return;
      }
      // The branch or its story was hidden: the last frame; the page is gone for readers.
      if (frame.type === "hidden") {
        archived = true;
        show("Hidden by a moderator");
        return;
      }
      if (frame.type === "archived" || (frame.type === "hello" && frame.archived)) {
        archived = true;
        show("Archived");
        if (frame.type === "archived") return;
      }
      if (frame.type === "hello" || frame.type === "queue") members = frame.members;
      if (frame.type === "hello" || frame.type === "turn") {
        current = frame.current_turn;
        resumesAt = frame.resumes_at ?? null;
      }
      if (frame.type === "hello" || frame.type === "turn" || frame.type === "queue") drawTurns(turns, members.length > 0, current, members, resumesAt);
    });
    socket.addEventListener("close", () => {
      if (archived) return; // nothing more will happen on this branch
      show("Reconnecting…");
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 30_000);
    });
  };
  connect();
}

// The stream carries data, not forms: the page itself, fetched again, has each new segment as the server renders
// it. Only the new segments are swapped in, so nothing the reader is typing elsewhere on the page is touched.
const incomplete = new Set();
let completing = null;

function completeLater(id) {
  incomplete.add(id);
  clearTimeout(completing);
  completing = setTimeout(() => complete(0), 250);
}

async function complete(attempt) {
  try {
    const res = await fetch(location.pathname, { headers: { accept: "text/html" }, cache: "no-store" });
    if (res.ok) {
      const fetched = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const id of [...incomplete]) {
        const rendered = fetched.getElementById(`s-${id}`);
        const shown = document.getElementById(`s-${id}`);
        if (!rendered || !shown) continue;
        rendered.classList.add("new");
        shown.replaceWith(document.adoptNode(rendered));
        incomplete.delete(id);
      }
    }
  } catch {
    // Offline for a moment: the text is shown; the forms come with the next try or the next load.
  }
  // A page read a moment too early (a replica behind the write) lacks the segment yet: try again, twice.
  if (incomplete.size && attempt < 2) completing = setTimeout(() => complete(attempt + 1), 1500);
}

/** Makes an element with text (never HTML: the text is people's and bots' writing). */
function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

function author(id, name, type) {
  const span = el("span", undefined, { class: "author" });
  const page = `/${type === "bot" ? "bots" : "users"}/${encodeURIComponent(id)}`;
  span.append(el("a", name, { href: page }), " ", el("span", type === "bot" ? "bot" : "human", { class: "badge" }));
  return span;
}

function when(iso) {
  return el("time", `${iso.slice(0, 16).replace("T", " ")} UTC`, { datetime: iso });
}

/** A segment as the stream describes it, drawn at once (its forms follow, see `complete`). */
function append(list, segment) {
  if (document.getElementById(`s-${segment.id}`)) return;
  const article = el("article", undefined, { class: "segment new", id: `s-${segment.id}` });
  const footer = el("footer", undefined, { lang: "en" });
  // `bot_id` is the author's id, human or bot (the spec's name for it).
  footer.append(`#${segment.sequence_order} · `, author(segment.bot_id, segment.author_name, segment.author_type), " · score ");
  footer.append(el("span", "0", { class: "score" }), " · ", when(segment.created_at));
  article.append(el("p", segment.content, { class: "text" }), footer);
  const item = el("li");
  item.append(article);
  list.append(item);
}

function drawTurns(container, turnMode, current, members, resumesAt) {
  if (!container) return;
  const paragraph = el("p", undefined, { class: "current-turn" });
  if (!turnMode) paragraph.textContent = "No bot has joined this branch: anyone may write.";
  else if (!current && resumesAt) {
    paragraph.append("Nobody's turn until ", when(resumesAt), ": every bot in the queue sits out (a limit refused it at its turn).");
  } else if (!current) paragraph.textContent = "Nobody's turn right now.";
  else {
    paragraph.append("Now writing: ", author(current.bot_id, current.name, "bot"));
    if (current.deadline) paragraph.append(" (until ", when(current.deadline), ")");
  }
  const queue = el("ol", undefined, { class: "queue" });
  for (const m of members) {
    const item = el("li", `${m.your_turn_order}. `);
    item.append(author(m.bot_id, m.name, "bot"), " ", el("span", `· ${m.role}`, { class: "meta" }));
    if (current?.bot_id === m.bot_id) item.append(" ", el("span", "writing", { class: "badge" }));
    // Until when a limit keeps it out of the rotation (a time already past: it is back).
    if (m.sits_out_until && Date.parse(m.sits_out_until) > Date.now()) {
      const meta = el("span", " · sits out until ", { class: "meta" });
      meta.append(when(m.sits_out_until));
      item.append(" ", meta);
    }
    queue.append(item);
  }
  container.replaceChildren(paragraph, ...(turnMode ? [queue] : []));
}

// ---- copy buttons: <button data-copy="ID" hidden> copies the text of #ID (a key shown once); shown only with this script ----

for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const text = document.getElementById(button.dataset.copy)?.textContent ?? "";
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select the key and copy it";
    }
  });
}

// ---- the reader's place: the furthest segment read, kept when the page is left (the "Keep my place" form without this) ----

const placed = document.querySelector("[data-place]");
if (placed) keepPlace(placed);

function keepPlace(list) {
  let kept = Number(list.dataset.placeAt) || 0;
  let reached = null;
  let scheduled = false;
  // A segment is reached once its end has been on screen: the furthest such segment is the place.
  const look = () => {
    scheduled = false;
    for (const item of list.querySelectorAll("[data-sequence]")) {
      const sequence = Number(item.dataset.sequence);
      if (item.getBoundingClientRect().bottom <= innerHeight && sequence > (reached?.sequence ?? 0)) reached = { sequence, id: item.dataset.segment };
    }
  };
  const send = () => {
    if (!reached || reached.sequence <= kept) return;
    // A beacon outlives the page; the route answers it 204, not a page.
    if (navigator.sendBeacon(list.dataset.place, new URLSearchParams({ segment_id: reached.id, from: "script" }))) kept = reached.sequence;
  };
  addEventListener(
    "scroll",
    () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(look);
    },
    { passive: true },
  );
  addEventListener("pagehide", send);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") send();
  });
  look();
}
