/**
 * Style of the site pages (the info page and the overview's pictures) and the interface's
 * dark mode: served after style.ts in the one style sheet (assets.ts). Chart colours are
 * classes (`c0`..`c7`): an SVG takes them from here, as the page's policy allows no style
 * attribute; each has a light and a dark value with enough contrast on its background.
 */
export const SITE_CSS = `
:root { --c0: #0b57d0; --c1: #c45500; --c2: #1a7f37; --c3: #a3268b; --c4: #0e7490; --c5: #a40e26; --c6: #6b5b00; --c7: #57606a; --grid: #d0d7de; --code-bg: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --accent: #6ea8fe; --bad: #ff7b72; --ok: #56d364;
    --c0: #6ea8fe; --c1: #ffa657; --c2: #56d364; --c3: #f778ba; --c4: #39c5cf; --c5: #ff7b72; --c6: #e3b341; --c7: #9da7b3; --grid: #30363d; --code-bg: #161b22; }
  pre { background: var(--code-bg); }
  button { color: #0d1117; }
}
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 30rem), 1fr)); gap: 1rem 1.5rem; }
figure.chart { margin: 0; min-width: 0; }
figure.chart svg { width: 100%; height: auto; display: block; }
figure.chart .grid line { stroke: var(--grid); stroke-width: 1; }
figure.chart text { fill: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
@media (max-width: 40rem) { figure.chart text { font-size: 20px; } }
figure.chart .line { fill: none; stroke-width: 2; }
figure.chart .area { fill-opacity: 0.75; stroke: var(--bg); stroke-width: 0.5; }
${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `.c${i} { fill: var(--c${i}); stroke: var(--c${i}); } .line.c${i} { fill: none; } .sw.c${i} { background: var(--c${i}); }`).join('\n')}
figure.chart rect { stroke: none; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 0.1rem 1rem; padding: 0; margin: 0.25rem 0; }
.sw { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; margin-right: 0.35rem; vertical-align: -0.05rem; }
details.share { margin: 0.25rem 0; }
section .card h3 { margin: 0.4rem 0; font-size: 1.05rem; word-break: break-word; }
th[scope=row] { font-weight: 600; word-break: break-word; }
`;
