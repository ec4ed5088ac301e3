/**
 * The reader's one stylesheet, served at STYLESHEET_PATH: one column, readable line lengths, system fonts only
 * (no CDN, no web fonts), with the system CJK fonts in each stack so Chinese and Japanese text renders well.
 */
export const STYLESHEET_PATH = "/assets/reader.css";

const sans = `system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
  "PingFang SC", "Hiragino Sans", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC",
  "Yu Gothic", "Malgun Gothic", sans-serif`;
const serif = `Charter, "Iowan Old Style", Georgia, Cambria, "Noto Serif", "Songti SC", "STSong", "SimSun",
  "Noto Serif CJK SC", "Source Han Serif SC", "Hiragino Mincho ProN", serif`;

export const STYLESHEET = `
*, *::before, *::after { box-sizing: border-box; }
:root { color-scheme: light dark; --fg: #1d1d1f; --muted: #5f6368; --bg: #fdfcf9; --line: #dedbd2; --accent: #1a5fb4; --soft: #f3f1ea; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8e6e1; --muted: #a8a49c; --bg: #16161a; --line: #34343a; --accent: #8cb4ff; --soft: #202026; }
}
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
[hidden] { display: none !important; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 1rem/1.6 ${sans}; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.site-header, main, .site-footer { max-width: 44rem; margin: 0 auto; padding: 0 1rem; }
.site-header { position: relative; display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; padding-top: .75rem; padding-bottom: .5rem; border-bottom: 1px solid var(--line); }
.site-header .brand { display: inline-flex; align-items: center; gap: .4rem; font-weight: 700; font-size: 1.15rem; text-decoration: none; color: var(--fg); }
.site-header nav ul { list-style: none; display: flex; flex-direction: column; margin: 0; padding: 0; }
.menu-body nav li > a, .menu-body nav li > form button.link, .menu-body nav li.meta { display: block; padding: .45rem 0; }
.menu-body nav + nav { border-top: 1px solid var(--line); margin-top: .25rem; padding-top: .25rem; }
.site-menu > summary { list-style: none; cursor: pointer; padding: .3rem .8rem; border: 1px solid var(--line); border-radius: .3rem; background: var(--soft); }
.site-menu > summary::-webkit-details-marker { display: none; }
.site-menu[open] > summary { border-color: var(--accent); }
.site-menu[open] > .menu-body { position: absolute; z-index: 10; left: 0; right: 0; top: 100%; background: var(--bg); border-bottom: 1px solid var(--line); padding: .25rem 1rem .75rem; box-shadow: 0 .5rem 1rem rgb(0 0 0 / .15); }
@media (min-width: 48rem) {
  @supports selector(::details-content) {
    .site-menu { flex: 1 1 auto; }
    .site-menu > summary { display: none; }
    .site-menu::details-content { content-visibility: visible; }
    .site-menu > .menu-body, .site-menu[open] > .menu-body { position: static; display: flex; flex-wrap: wrap; align-items: baseline; gap: .25rem 1rem; padding: 0; border: 0; box-shadow: none; background: none; }
    .site-header nav ul { flex-direction: row; flex-wrap: wrap; align-items: baseline; gap: .25rem 1rem; }
    .menu-body nav li > a, .menu-body nav li > form button.link, .menu-body nav li.meta { display: inline; padding: 0; }
    .menu-body nav + nav { border: 0; margin: 0 0 0 auto; padding: 0; }
  }
}
.site-footer { color: var(--muted); font-size: .85rem; padding-top: 2rem; padding-bottom: 2rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 1.25rem 0 .5rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
.meta, .breadcrumbs { color: var(--muted); font-size: .9rem; }
.breadcrumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 1rem 0 0; padding: 0; }
.breadcrumbs li + li::before { content: "›"; margin-right: .25rem; }
.story-list, .tree, .segments, .comments, .queue, .pins { padding-left: 0; list-style: none; }
.story-list > li { padding: .75rem 0; border-bottom: 1px solid var(--line); }
.story-list h2, .story-list h3 { border: 0; margin: 0; padding: 0; font-size: 1.15rem; }
.story-list .blurb { font-family: ${serif}; margin: .2rem 0 .1rem; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; line-clamp: 2; overflow: hidden; }
.story-list .meta { margin: .1rem 0 0; }
.intro h1 { font-size: 1.35rem; font-weight: 600; line-height: 1.35; margin: 1.25rem 0 .75rem; }
.next-steps, .first-story p, .continue-story { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; }
.first-story { background: var(--soft); border-left: 3px solid var(--accent); padding: .25rem 1rem; margin: 1rem 0; }
a.button { display: inline-block; padding: .45rem 1rem; border: 1px solid var(--accent); border-radius: .3rem; text-decoration: none; font-weight: 600; }
a.button.primary { background: var(--accent); color: var(--bg); }
a.button:hover { text-decoration: underline; }
.continue-story { margin: 1rem 0 0; }
.prose, .segment .text, .path-segment .text { font-family: ${serif}; font-size: 1.1rem; line-height: 1.8; }
.prose p { margin: 0 0 1em; }
.prose:lang(zh), .prose:lang(ja), .segment:lang(zh) .text, .segment:lang(ja) .text, .path:lang(zh) .text, .path:lang(ja) .text { line-height: 1.9; }
.background, .style-rules, .pin { background: var(--soft); border-left: 3px solid var(--line); padding: .5rem .75rem; margin: .5rem 0; white-space: pre-wrap; }
.pin h3 { margin-top: 0; }
.tree ul { list-style: none; padding-left: 1.25rem; border-left: 1px dashed var(--line); margin-left: .35rem; }
.tree li { margin: .35rem 0; }
.segment { padding: .75rem 0; border-bottom: 1px solid var(--line); }
.segment .text { white-space: pre-wrap; margin: .25rem 0; }
.segment.inherited .text { color: var(--muted); }
.segment footer, .comment footer { color: var(--muted); font-size: .85rem; }
.badge { display: inline-block; font-size: .75rem; border: 1px solid var(--line); border-radius: .25rem; padding: 0 .3rem; color: var(--muted); }
.comments ul { list-style: none; padding-left: 1rem; border-left: 2px solid var(--line); margin-left: .25rem; }
.comment { margin: .5rem 0; }
.comment p { margin: .15rem 0; white-space: pre-wrap; }
.pager { display: flex; justify-content: space-between; gap: 1rem; margin: 1.5rem 0; }
.pager ul { list-style: none; display: flex; gap: 1rem; padding: 0; margin: 0; }
.current-turn { font-weight: 600; }
.figures { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .5rem 0; }
.figures dt { color: var(--muted); }
.figures dd { margin: 0; font-variant-numeric: tabular-nums; }
.site-search { display: block; flex: 1 1 100%; margin: 0; }
.site-search form { display: flex; gap: .5rem; }
.site-search input { flex: 1 1 auto; min-width: 0; padding: .3rem .5rem; background: var(--bg); border: 1px solid var(--muted); border-radius: .3rem; }
.search-results { padding-left: 0; list-style: none; }
.search-results > li { padding: .75rem 0; border-bottom: 1px solid var(--line); }
.search-results h2 { border: 0; margin: 0; padding: 0; font-size: 1.1rem; }
.search-results .snippet { font-family: ${serif}; margin: .25rem 0; }
mark { background: #fff3a3; color: #1d1d1f; border-radius: .15rem; padding: 0 .1rem; }
@media (prefers-color-scheme: dark) { mark { background: #6b5d00; color: #fffbe6; } }
form.inline { display: inline; margin: 0; }
button, input, select, textarea { font: inherit; color: inherit; }
button { background: var(--soft); border: 1px solid var(--line); border-radius: .3rem; padding: .3rem .8rem; cursor: pointer; }
button:hover { border-color: var(--accent); }
button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
button.link { background: none; border: 0; padding: 0; color: var(--accent); text-decoration: underline; }
.field { margin: .75rem 0; }
.field label { display: block; font-weight: 600; margin-bottom: .2rem; }
.field input, .field select, .field textarea { width: 100%; max-width: 100%; padding: .4rem .5rem; background: var(--bg); border: 1px solid var(--muted); border-radius: .3rem; }
.field textarea { resize: vertical; line-height: 1.6; }
.choice { display: flex; gap: .5rem; align-items: baseline; margin: .5rem 0; }
.choice input { width: auto; flex: none; }
.choice label { font-weight: 400; }
fieldset { border: 1px solid var(--muted); border-radius: .3rem; margin: 1rem 0; }
.hint { display: block; color: var(--muted); font-size: .85rem; margin-top: .15rem; }
output.hint[data-state="short"], output.hint[data-state="long"] { color: #b3261e; }
@media (prefers-color-scheme: dark) { output.hint[data-state="short"], output.hint[data-state="long"] { color: #ffb4ab; } }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 0 1rem; }
.form-error { border: 2px solid #b3261e; border-radius: .3rem; padding: .25rem .75rem; margin: .5rem 0; }
.form-error p { margin: .25rem 0; font-weight: 600; }
form.vote { display: inline-flex; gap: .25rem; align-items: center; flex-wrap: wrap; margin: .25rem 0; }
form.vote button { padding: .1rem .5rem; min-width: 2.25rem; min-height: 2rem; }
form.vote button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--bg); }
.segment-actions { display: flex; flex-wrap: wrap; gap: .25rem .65rem; align-items: center; font-size: .85rem; }
.segment-actions form.vote { margin: 0; }
.segment-actions .report { font-size: inherit; }
details.fold { margin: .25rem 0; }
details.fold[open] { flex: 1 1 100%; }
.segment-actions details.fold summary { padding: .2rem 0; }
details.fold summary { cursor: pointer; color: var(--accent); width: max-content; }
.report, .report-link { font-size: .85rem; }
.report-link { color: var(--muted); }
.report details.fold summary { color: var(--muted); }
.admin-nav ul, .filters ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; margin: 1rem 0 0; }
.report-queue { list-style: none; padding-left: 0; }
.report-item { border-bottom: 1px solid var(--line); padding: .75rem 0; }
.report-item .excerpt { font-family: ${serif}; background: var(--soft); border-left: 3px solid #b3261e; margin: .5rem 0; padding: .5rem .75rem; white-space: pre-wrap; }
.resolve .buttons { display: flex; flex-wrap: wrap; gap: .5rem; }
table.audit { width: 100%; border-collapse: collapse; font-size: .9rem; }
table.audit th, table.audit td { text-align: left; vertical-align: top; padding: .3rem .4rem; border-bottom: 1px solid var(--line); }
.map { margin: .5rem 0 1rem; }
.map-svg { display: block; width: 100%; height: auto; }
.map-svg.wide { max-width: 660px; }
.map-svg.narrow { display: none; }
@media (max-width: 40rem) { .map-svg.wide { display: none; } .map-svg.narrow { display: block; } }
.map-svg.narrow text { paint-order: stroke; stroke: var(--bg); stroke-width: 3px; stroke-linejoin: round; }
.map-svg text { fill: var(--fg); font-size: 14px; }
.map-svg .figures, .map-svg .axis { fill: var(--muted); font-size: 12px; }
.map-svg .main .name { font-weight: 700; }
.map-svg .lane-bg { fill: transparent; }
.map-svg a:hover .lane-bg { fill: var(--soft); }
.map-svg a:focus { outline: none; }
.map-svg a:focus-visible .lane-bg { fill: var(--soft); stroke: var(--accent); stroke-width: 2; }
.map-svg .bar { fill: var(--accent); }
.map-svg .fork path { fill: none; stroke: var(--muted); stroke-width: 1.5; }
.map-svg .fork circle { fill: var(--muted); }
.map-svg .fork.folded path, .map-svg .more { stroke-dasharray: 3 3; }
.map-svg .more { fill: none; stroke: var(--muted); stroke-width: 1.5; }
.map-svg .turn { fill: var(--bg); stroke: var(--accent); stroke-width: 3; }
.path { list-style: none; padding-left: 0; }
.path-segment .text { white-space: pre-wrap; margin: .75rem 0 .1rem; }
.path-segment > .meta { margin: 0; font-size: .8rem; }
.crossing { border-top: 2px dashed var(--accent); padding-top: .5rem; margin: 1.75rem 0 .5rem; color: var(--muted); font-size: .9rem; }
.choices { background: var(--soft); border-left: 3px solid var(--accent); padding: .25rem .75rem; margin: .5rem 0 1rem; font-size: .95rem; }
.choices p { margin: .25rem 0; font-weight: 600; }
.choices ul { margin: .25rem 0; padding-left: 1.25rem; }
.path-end { font-style: italic; margin-top: 1.5rem; }
.path-segment > .marks { margin-top: .1rem; }
.badge.place { border-color: var(--accent); color: var(--accent); }
.keep-place { margin: 1rem 0; }
.places, .bookmarks { list-style: none; padding-left: 0; }
.places li { margin: .35rem 0; }
.bookmarks > li { border-bottom: 1px solid var(--line); padding: .5rem 0; }
.bookmarks h2 { border: 0; margin: .25rem 0; padding: 0; font-size: 1.05rem; }
.bookmarks .excerpt { font-family: ${serif}; white-space: pre-wrap; margin: .25rem 0; }
.bookmarks .note { background: var(--soft); border-left: 3px solid var(--accent); padding: .25rem .75rem; white-space: pre-wrap; }
.chips { list-style: none; display: flex; flex-wrap: wrap; gap: .3rem; padding: 0; margin: .35rem 0; font-size: .8rem; }
.chip { border: 1px solid var(--line); border-radius: 1rem; padding: .05rem .55rem; color: var(--muted); background: var(--soft); }
.chip.tag a { color: var(--accent); text-decoration: none; }
.chip.tag a:hover { text-decoration: underline; }
.chip.authorship { color: var(--fg); font-weight: 600; }
.chip.rating.mature, .chip.warning { border-color: #b3261e; color: #8c1d18; }
@media (prefers-color-scheme: dark) { .chip.rating.mature, .chip.warning { border-color: #ffb4ab; color: #ffb4ab; } }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
fieldset.checkboxes { border: 1px solid var(--line); border-radius: .3rem; padding: .25rem .75rem .5rem; }
fieldset.checkboxes legend { font-weight: 600; padding: 0 .25rem; }
fieldset.length-rule { border: 1px solid var(--line); padding: .25rem .75rem .5rem; }
fieldset.length-rule legend { font-weight: 600; padding: 0 .25rem; }
fieldset.checkboxes label, .field.checkbox label { display: inline-flex; gap: .35rem; align-items: center; margin-right: 1rem; font-weight: normal; }
.field.checkbox input, fieldset.checkboxes input { width: auto; }
.notice { border-left: 3px solid var(--accent); padding: .25rem .75rem; }
#inbox-count { background: var(--accent); border-color: var(--accent); color: var(--bg); }
.follow { display: inline-flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; margin: .25rem 0; }
.inbox { list-style: none; padding-left: 0; }
.inbox-item { padding: .6rem 0; border-bottom: 1px solid var(--line); }
.inbox-item.unread { border-left: 3px solid var(--accent); padding-left: .6rem; }
.inbox-item .excerpt { font-family: ${serif}; color: var(--muted); margin: .2rem 0; white-space: pre-wrap; }
.segment.new, .inbox-item.new { animation: arrive 2s ease-out; }
@keyframes arrive { from { background: var(--soft); } to { background: transparent; } }
@media (prefers-reduced-motion: reduce) { .segment.new, .inbox-item.new { animation: none; } }
@media (min-width: 60rem) { body { font-size: 1.0625rem; } }
@media print { .site-menu, .site-search, .pager, .reload { display: none; } }
`;
