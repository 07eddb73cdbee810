/**
 * What the web pages need to answer: the page shell, the pages, the job history readers
 * and the static files. Imported with the first web request (routes.ts), not at start
 * (docs/performance.md, "Memory"); the multipart reader comes with the first form upload.
 */
export { loadAssets, type Assets } from './assets.js';
export { page, sendPage } from './layout.js';
export { delegationsBody, errorBody, jobActions, jobBody, jobStateFragment, overviewBody } from './pages.js';
export { jobListBody, jobRows, parseListQuery, afterOf } from './job-list.js';
export { parseDiag, parseErrorsFile } from './job-history.js';
export { submitBody } from './submit-page.js';
export { html } from './html.js';
export { infoBody } from './info-page.js';
export { sitePictures, WINDOWS, DEFAULT_WINDOW } from './site-pictures.js';
export { parseStatistics } from './job-transfers.js';
