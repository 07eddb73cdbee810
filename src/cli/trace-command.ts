/**
 * `ceres trace URL`: tests a CE end to end with the caller's own proxy or token
 * (src/client/trace/trace.ts): TLS trust, authentication, authorization and mapping,
 * queue choice, a dry submission, delegation, a tiny job followed to its end, its
 * output, its cleaning. Exits 1 naming the failed step, its reason and a remedy.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { runTrace } from '../client/trace/trace.js';
import { reportJson, stateLine, stepLine, summaryLine } from '../client/trace/trace-report.js';

interface TraceFlags {
  queue?: string;
  tokenFile?: string;
  caDir?: string;
  json?: boolean;
  timeout: number;
  xrsl?: string;
}

export function registerTraceCommand(program: Command): void {
  program
    .command('trace')
    .description(
      'test a CE end to end with your own proxy or token: TLS trust, authentication, authorization, ' +
        'queue, a dry submission, delegation, a tiny job followed to its end, its output, its cleaning',
    )
    .argument('<url>', 'the service URL, e.g. https://ce.example.org:443/arex (Ceres or A-REX)')
    .option('--queue <queue>', 'the queue to submit to (default: the first published one open to every caller)')
    .option(
      '--token-file <file>',
      'authenticate with the bearer token in this file (default: a proxy from X509_USER_PROXY or ' +
        '/tmp/x509up_u<uid>; a token from BEARER_TOKEN, BEARER_TOKEN_FILE, $XDG_RUNTIME_DIR/bt_u<uid>, /tmp/bt_u<uid>)',
    )
    .option('--ca-dir <dir>', 'trusted CA directory (default: X509_CERT_DIR, else /etc/grid-security/certificates)')
    .option('--json', 'print the whole report as JSON at the end instead of a line per step')
    .option('--timeout <seconds>', 'the most any one step may take, following the job included', positiveSeconds, 300)
    .option(
      '--xrsl <relations>',
      'xRSL relations added to the test job, e.g. \'(runtimeenvironment="APPS/X")\'',
      xrslText,
    )
    .addHelpText(
      'after',
      '\nExit status: 0 when every step passed; 1 when one failed (its name, reason and remedy are printed).\n' +
        'Nothing secret is printed: a token or a key never appears in the output.',
    )
    .action(async (url: string, f: TraceFlags) => {
      // A reader that goes away (`| head`) must not end the trace before it has cleaned its
      // job: what cannot be written is dropped.
      process.stdout.on('error', () => undefined);
      const out = (t: string): boolean => process.stdout.write(t);
      if (f.json !== true) out(`ceres trace ${url}\n`);
      const report = await runTrace({
        url: checkedUrl(url),
        queue: f.queue,
        tokenFile: f.tokenFile,
        caDir: f.caDir,
        timeoutMs: f.timeout * 1000,
        xrsl: f.xrsl,
        env: process.env,
        uid: process.getuid?.() ?? 0,
        ...(f.json === true
          ? {}
          : {
              onStep: (r) => void out(`${stepLine(r)}\n`),
              onState: (job, s) => void out(`${stateLine(s, job.dryRun)}\n`),
            }),
      });
      if (f.json === true) out(reportJson(report));
      else if (report.ok) out(`${summaryLine(report)}\n`);
      else process.stderr.write(`ceres trace: ${summaryLine(report)}\n`);
      if (!report.ok) process.exitCode = 1;
    });
}

function checkedUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${v} (give the service URL, e.g. https://ce.example.org:443/arex)`);
  }
  if (u.protocol !== 'https:') throw new InvalidArgumentError(`the service URL must be https://, not ${u.protocol}`);
  return v;
}

function positiveSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return n;
}

function xrslText(v: string): string {
  const t = v.trim();
  if (!t.startsWith('(') || !t.endsWith(')')) throw new InvalidArgumentError('xRSL relations, each in parentheses');
  return t;
}
