/**
 * `ceres serve`: load the configuration, start the service, print the service URL and
 * the CA directory it trusts (or the development PKI folder), and shut down on SIGTERM/SIGINT:
 *   first signal  -> graceful: stop accepting, finish in-flight requests, stop the
 *                    engine cleanly (running jobs keep running; they are recovered on
 *                    the next start), exit 0;
 *   second signal, or `shutdownTimeoutSeconds` passed -> forced exit 1.
 * A service that cannot start (state directory in use, address in use, ...) prints
 * why and exits 1 at once: nothing it began may keep the process alive.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/load.js';
import { startService } from '../service/start.js';
import { createLogger, reopenLogFile, type LogFileAccess } from '../process/logger.js';
import { lookUpGroup } from '../accounts/resolve-account.js';
import { StartError } from '../process/start-error.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the computing element')
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:8443; port 0 picks a free port)')
    .option('--state-dir <dir>', 'state directory (default ./var)')
    .option('--config <file>', 'configuration file (JSON)')
    .action(async (opts: { listen?: string; stateDir?: string; config?: string }) => {
      let config;
      try {
        config = loadConfig(opts.config, { listen: opts.listen, stateDir: opts.stateDir });
      } catch (e) {
        if (e instanceof ConfigError) {
          process.stderr.write(`ceres: ${e.message}\n`);
          process.exit(2);
        }
        throw e;
      }
      let access: LogFileAccess = {};
      const group = config.log.group;
      if (group !== undefined) {
        const gid = await lookUpGroup(group);
        if (gid === undefined) {
          process.stderr.write(
            `ceres: config key 'log.group': no group ${JSON.stringify(group)} in the name service\n`,
          );
          process.exit(2);
        }
        access = { gid };
      }
      let log;
      try {
        log = createLogger(config.log, access);
      } catch (e) {
        process.stderr.write(`ceres: config key 'log.file': cannot open ${config.log.file}: ${(e as Error).message}\n`);
        process.exit(2);
      }
      // logrotate's postrotate: reopen the log file, reload what can change safely
      // (docs/operations.md, Log rotation and reload). Installed before the start, so a
      // SIGHUP during it only reopens the log instead of ending the process (its default).
      let hup = (): void => reopenLogFile(log, config.log.file, access);
      process.on('SIGHUP', () => hup());
      let svc;
      try {
        svc = await startService(config, log);
      } catch (e) {
        if (e instanceof StartError) {
          log.error({ reason: e.message }, 'service not started');
          process.stderr.write(`ceres: ${e.message}\n`);
        } else {
          log.error({ err: e }, 'service failed to start');
          process.stderr.write(
            `ceres: the service failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
          );
        }
        log.flush?.();
        process.exit(1);
      }
      process.stdout.write(`ceres: service URL ${svc.url}\n`);
      process.stdout.write(`ceres: jobs run as ${svc.jobAccounts}\n`);
      // Before the PKI line: tools wait for that one as the last.
      if (svc.metricsUrl !== undefined) process.stdout.write(`ceres: metrics URL ${svc.metricsUrl}\n`);
      // A site's CA directory (IGTF) holds CAs only; the development PKI folder holds its CA,
      // host and user credentials: each line says which it is.
      process.stdout.write(
        svc.devPki ? `ceres: development PKI folder ${svc.pkiDir}\n` : `ceres: CA directory ${svc.pkiDir}\n`,
      );
      if (svc.devTokenIssuer !== undefined)
        process.stdout.write(`ceres: token issuer ${svc.devTokenIssuer} (ceres token issue)\n`);
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) {
          log.warn({ signal }, 'second signal: forcing exit');
          process.exit(1);
        }
        stopping = true;
        log.info({ signal }, 'shutting down gracefully');
        const timer = setTimeout(() => {
          log.error('graceful shutdown timed out: forcing exit');
          process.exit(1);
        }, config.shutdownTimeoutSeconds * 1000);
        timer.unref();
        svc.close().then(
          () => {
            log.info('stopped');
            log.flush?.();
            process.exit(0);
          },
          (e: unknown) => {
            log.error({ err: e }, 'error during shutdown');
            process.exit(1);
          },
        );
      };
      for (const s of SIGNALS) process.on(s, () => stop(s));
      const running = svc;
      hup = (): void => {
        if (stopping) return;
        reopenLogFile(log, config.log.file, access);
        log.info({ signal: 'SIGHUP', file: config.log.file }, 'log file reopened; reloading the configuration');
        running.reload(() => loadConfig(opts.config, { listen: opts.listen, stateDir: opts.stateDir }));
      };
    });
}
