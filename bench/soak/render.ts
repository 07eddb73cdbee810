/**
 * A soak or chaos report as markdown: the figures, 5xx and unanswered requests by
 * route, the job checks, and the service's own exits.
 */
import { formatNumber } from '../harness/render.js';
import type { SoakReport } from './run.js';
import { exitText } from './service.js';
import { verdictProblems } from './verify.js';

export function soakMarkdown(
  title: string,
  meta: readonly string[],
  r: SoakReport,
  problems: readonly string[],
): string {
  const v = r.verdict;
  const lines = [
    `# ${title}`,
    '',
    ...meta.map((m) => `* ${m}`),
    '',
    `**${problems.length === 0 ? 'PASSED' : 'FAILED'}**${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`,
    '',
    '| figure | value |',
    '| --- | --- |',
    `| clients (users) | ${r.clients} (${r.users}) |`,
    `| seconds of mixed work | ${r.seconds} |`,
    `| requests answered, requests/s | ${formatNumber(r.requests)}, ${formatNumber(r.reqPerS)} |`,
    `| latency p50 / p90 / p99 / max | ${formatNumber(r.latencyMs.p50)} / ${formatNumber(r.latencyMs.p90)} / ${formatNumber(r.latencyMs.p99)} / ${formatNumber(r.latencyMs.max)} ms |`,
    `| 5xx answers | ${r.fiveXx} |`,
    `| requests without an answer | ${r.transportFailures} |`,
    `| aborted uploads (answered before the cut) | ${r.abortedUploads} (${
      Object.entries(r.abortedAnswers)
        .map(([k, n]) => `${n} × ${k}`)
        .join(', ') || 'none'
    }) |`,
    `| uploads still owed after the mix: made / jobs killed | ${r.owedUploads.uploaded} / ${r.owedUploads.killed}${
      Object.keys(r.owedUploads.answers).length
        ? ` (${Object.entries(r.owedUploads.answers)
            .map(([k, n]) => `${n} × ${k}`)
            .join(', ')})`
        : ''
    } |`,
    ...(r.rss.growth
      ? [
          `| RSS after warm-up → end (medians of the minute after the warm-up and of the last minute) | ${r.rss.growth.warmMiB} → ${r.rss.growth.endMiB} MiB (${r.rss.growth.growthPct >= 0 ? '+' : ''}${r.rss.growth.growthPct} %) |`,
        ]
      : []),
    ...(r.chaos
      ? [
          `| kill -9 / restarts (p50, max restart) | ${r.chaos.kills} / ${r.chaos.restarts} (${formatNumber(r.chaos.restartMs.p50)} ms, ${formatNumber(r.chaos.restartMs.max)} ms) |`,
        ]
      : []),
    `| jobs acknowledged (201) | ${formatNumber(v.acknowledged)} (${formatNumber(v.cleaned)} cleaned during the run, ${v.cleanedUnanswered} by a clean whose answer a kill cut off) |`,
    `| final states of the others | ${
      Object.entries(v.states)
        .map(([k, n]) => `${formatNumber(n)} ${k}`)
        .join(', ') || 'none'
    } |`,
    `| missing / not ended / ran twice / FINISHED without running / FAILED | ${v.missing.length} / ${Object.keys(v.notEnded).length} / ${Object.keys(v.ranTwice).length} / ${v.finishedNotRun.length} / ${Object.keys(v.failed).length} |`,
    `| service exits not caused by the harness | ${r.crashes.length === 0 ? (r.serviceGoneAfterS !== undefined ? `gone ${r.serviceGoneAfterS} s into the run` : 'none') : r.crashes.map(exitText).join(', ')} |`,
    '',
    '## By route',
    '',
    '| route | answers | statuses | no answer | p50 | p99 |',
    '| --- | --- | --- | --- | --- | --- |',
    ...r.routes.map(
      (x) =>
        `| ${x.route} | ${formatNumber(x.answers)} | ${Object.entries(x.statuses)
          .map(([s, n]) => `${s}: ${n}`)
          .join(
            ', ',
          )} | ${x.transport} | ${x.latencyMs.n ? `${formatNumber(x.latencyMs.p50)} ms` : ''} | ${x.latencyMs.n ? `${formatNumber(x.latencyMs.p99)} ms` : ''} |`,
    ),
    '',
  ];
  const checks = verdictProblems(v);
  if (checks.length > 0) lines.push('## Job checks', '', ...checks.map((c) => `* ${c}`), '');
  const samples = r.routes.filter((x) => x.samples5xx.length > 0);
  if (samples.length > 0)
    lines.push(
      '## 5xx bodies',
      '',
      ...samples.map((x) => `* ${x.route}: ${x.samples5xx.map((t) => `\`${t.replace(/`/g, "'")}\``).join(' ')}`),
      '',
    );
  if (r.transportText) lines.push('## Requests without an answer', '', `${r.transportText}`, '');
  if (r.crashes.length > 0)
    lines.push(
      '## Service exits',
      '',
      ...r.crashes.flatMap((e) => [`pid ${e.pid}, ${exitText(e)} at ${e.at}:`, '', '```', e.logTail ?? '', '```', '']),
    );
  if (r.rss.series.length > 0)
    lines.push(
      '## RSS over time',
      '',
      r.rss.series.map((x) => `${Math.round(x.s)} s: ${Math.round(x.mib)} MiB`).join(', '),
      '',
    );
  return `${lines.join('\n')}\n`;
}
