/**
 * The enhancement script (served as a file: the Content-Security-Policy allows no inline
 * script). Everything works without it except uploads, which it sends as a streamed PUT
 * (no multipart parser in the service) carrying the page's request token in a header.
 */
export const WEB_JS = `'use strict';
document.addEventListener('submit', async (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !form.matches('form[data-upload]')) return;
  ev.preventDefault();
  const input = form.querySelector('input[type=file]');
  const out = form.querySelector('[data-upload-status]');
  const file = input && input.files && input.files[0];
  if (!file) { out.textContent = 'Choose a file first.'; return; }
  const max = Number(form.dataset.max);
  if (file.size > max) { out.textContent = 'The file is too large: at most ' + max + ' bytes can be uploaded here.'; return; }
  out.textContent = 'Uploading ' + file.name + '...';
  const token = form.querySelector('input[name=csrf]').value;
  const r = await fetch(form.action + '?name=' + encodeURIComponent(form.dataset.dir ? form.dataset.dir + '/' + file.name : file.name), { method: 'PUT', body: file, headers: { 'x-ceres-csrf': token } });
  if (r.ok) { location.reload(); return; }
  out.textContent = 'Upload failed: ' + (await r.text()).slice(0, 300);
});
`;
