// A job forging its exit code and usage on a Slurm with slurmdbd (forged-usage.case.ts).
import { forgedUsageSuite } from './forged-usage.case.js';

forgedUsageSuite(true);
