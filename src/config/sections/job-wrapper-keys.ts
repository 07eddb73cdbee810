import { Type } from '@sinclair/typebox';

/**
 * The keys of a batch backend that runs the shared job wrapper (src/lrms/core) inside each
 * batch job: which wrapper, the compiler of its C form, and the PATH jobs start with. One
 * definition for every such backend (Slurm, Grid Engine); only the names of the batch system
 * and of its hosts differ in the descriptions.
 */
export function jobWrapperKeys(system: string, hosts: { one: string; many: string }) {
  return {
    wrapper: Type.Union([Type.Literal('auto'), Type.Literal('c'), Type.Literal('sh')], {
      default: 'auto',
      description: `Job wrapper run inside each ${system} job (as for the fork backend); it must run on the ${hosts.many} (same architecture and C library as the service host for \`c\`)`,
    }),
    compiler: Type.String({ default: 'cc', minLength: 1, description: 'C compiler command for the job wrapper' }),
    jobPath: Type.String({
      default: '/usr/local/bin:/usr/bin:/bin',
      minLength: 1,
      description: `PATH jobs start with on the ${hosts.one}`,
    }),
  };
}
