/**
 * The live updates of the job list and the job page (served as a file: the
 * Content-Security-Policy allows no inline script). An element with `data-refresh` is
 * redrawn from that fragment address:
 *
 * - while the page follows the job event stream (`data-events` on one element: the
 *   caller's own stream, `GET {mount}/rest/1.1/jobs` with `Accept: text/event-stream`, same
 *   origin, so the browser presents the user's certificate and the stream is authorized
 *   as the pages are), on each event, and never by polling;
 * - otherwise (no script-visible stream: an administrator's list, a stream refused with
 *   429 at the per-identity limit or 403, ended by the service, or cut) every `data-poll`
 *   milliseconds, as before the stream existed, while a new stream is tried after a
 *   back-off. The stream resumes after the last event seen (`last_event_id`), starting
 *   from the sequence number the page was drawn at (`data-last-event-id`), so no change
 *   between drawing and following is missed.
 *
 * An element with `data-keep-focus` (the job's action buttons) is not replaced while the
 * keyboard focus is inside it: the new content waits until the focus leaves, so a person
 * tabbing to Kill never has the button pulled from under them. `body[data-live]` says
 * which way the page is updated (`stream` or `polling`; tests and curious people).
 */
export const WEB_LIVE_JS = `'use strict';
(() => {
  const parts = [...document.querySelectorAll('[data-refresh]')];
  if (parts.length === 0) return;
  const source = document.querySelector('[data-events]');
  let last = source ? source.dataset.lastEventId : undefined;
  const pending = new Map();
  const swap = (el, html) => {
    if (el.hasAttribute('data-keep-focus') && el.contains(document.activeElement)) {
      pending.set(el, html);
      return;
    }
    pending.delete(el);
    el.innerHTML = html;
  };
  document.addEventListener('focusout', (ev) => {
    for (const [el, html] of pending) {
      if (!el.contains(ev.relatedTarget)) { pending.delete(el); el.innerHTML = html; }
    }
  });
  const busy = new Set();
  const again = new Set();
  const refresh = async (el) => {
    if (busy.has(el)) { again.add(el); return; }
    busy.add(el);
    try {
      const r = await fetch(el.dataset.refresh, { credentials: 'same-origin', headers: { accept: 'text/html' } });
      if (r.ok) swap(el, await r.text());
    } catch {
      /* the next event or poll tries again */
    } finally {
      busy.delete(el);
      if (again.delete(el)) void refresh(el);
    }
  };
  const timers = new Map();
  const poll = (on) => {
    document.body.dataset.live = on ? 'polling' : 'stream';
    for (const el of parts) {
      if (on && !timers.has(el)) timers.set(el, setInterval(() => void refresh(el), Number(el.dataset.poll) || 3000));
      if (!on && timers.has(el)) { clearInterval(timers.get(el)); timers.delete(el); }
    }
  };
  poll(true);
  if (!source || typeof EventSource !== 'function') return;
  let backoff = 5000;
  const follow = () => {
    const url = source.dataset.events;
    const es = new EventSource(last === undefined ? url : url + (url.includes('?') ? '&' : '?') + 'last_event_id=' + encodeURIComponent(last));
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      es.close();
      poll(true);
      setTimeout(follow, backoff);
      backoff = Math.min(backoff * 2, 60000);
    };
    es.addEventListener('open', () => { backoff = 5000; poll(false); });
    const changed = (ev) => {
      if (ev.lastEventId) last = ev.lastEventId;
      for (const el of parts) void refresh(el);
    };
    es.addEventListener('state', changed);
    es.addEventListener('relist', changed);
    // The service ended the stream (slow reader, credential expiry, stopping), or it was
    // refused or cut: poll meanwhile, follow again later from the last event seen.
    es.addEventListener('end', stop);
    es.addEventListener('error', stop);
  };
  follow();
})();
`;
