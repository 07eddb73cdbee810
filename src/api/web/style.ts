/** The web interface's style sheet: system fonts, readable on a phone (no fixed widths), visible focus. */
export const STYLE_CSS = `
:root { --fg: #1b1f24; --bg: #fff; --muted: #555; --line: #d0d7de; --accent: #0b57d0; --bad: #a40e26; --ok: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { padding: 0.75rem 1rem; max-width: 72rem; margin: 0 auto; }
header { border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: baseline; }
header nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; margin: 0; padding: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--bg); padding: 0.25rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; }
.table-wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.id, code, pre { font-family: ui-monospace, monospace; word-break: break-all; }
pre { white-space: pre-wrap; background: #f6f8fa; padding: 0.5rem; border: 1px solid var(--line); max-height: 30rem; overflow: auto; }
.state { font-weight: 600; }
.state-FAILED, .state-KILLED, .error { color: var(--bad); }
.state-FINISHED, .notice { color: var(--ok); }
form.inline { display: inline; }
button, input, select { font: inherit; padding: 0.3rem 0.6rem; max-width: 100%; }
header code { word-break: break-all; }
button { border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; cursor: pointer; }
button.danger { background: var(--bad); border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.5rem 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dd { margin: 0; word-break: break-word; }
td.owner { word-break: break-all; font-size: 0.9em; }
ol.timeline, ul.log { list-style: none; padding: 0; margin: 0.5rem 0; }
ol.timeline li { border-left: 3px solid var(--line); padding: 0.15rem 0 0.15rem 0.75rem; }
ol.timeline li:last-child { border-left-color: var(--accent); }
ul.log li { border-bottom: 1px solid var(--line); padding: 0.2rem 0; word-break: break-word; }
time { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: 0.5rem; }
details.confirm summary { cursor: pointer; color: var(--bad); font-weight: 600; padding: 0.3rem 0; }
.muted { color: var(--muted); }
td.used-by ul { margin: 0; padding-left: 1rem; }
textarea { font: 0.9em/1.4 ui-monospace, monospace; width: 100%; padding: 0.3rem; }
.submit-form label { display: block; }
ol.desc-lines { font-family: ui-monospace, monospace; padding-left: 3.5rem; }
ol.desc-lines li { word-break: break-all; }
ol.desc-lines li code { white-space: pre-wrap; }
ol.desc-lines li.bad { background: #fdecea; }
ol.desc-lines li.gap { list-style: none; }
ol.desc-lines p { margin: 0.1rem 0 0.4rem; font-family: system-ui, sans-serif; }
@media (max-width: 40rem) { th.wide, td.wide { display: none; } dl { grid-template-columns: 1fr; } }
`;
