// The real ARC client's whole life cycle against Ceres running jobs with the fork backend
// (the suite: ./arc-client.case.ts).
import { arcClientLifecycle } from './arc-client.case.js';

arcClientLifecycle({ title: 'the real ARC client against Ceres' });
