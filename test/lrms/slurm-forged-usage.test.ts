// A job forging its exit code and usage on a Slurm without slurmdbd (forged-usage.case.ts).
import { forgedUsageSuite } from './forged-usage.case.js';

forgedUsageSuite(false);
