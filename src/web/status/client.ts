// The page's only script, served as /status.js (no build step; CSP allows scripts from 'self' only). It polls
// the live fragment every two seconds with If-None-Match, swaps it in when it changed, and keeps relative times
// current in between, and asks before the two actions that touch many or clinical records (data-confirm). On the
// configuration pages it only fills a suggested LOINC into its field.
// Without it the page is complete; it just does not move and does not ask.

/** The client script's source. */
export const clientScript = `'use strict';
(() => {
  // A suggestion's "Use" button fills its field; the person still previews and applies the change.
  document.addEventListener('click', (event) => {
    const button = event.target.closest && event.target.closest('button[data-fill]');
    if (!button) return;
    const input = document.getElementById(button.dataset.fill);
    if (input) { input.value = button.dataset.value; input.focus(); }
  });
  const live = document.getElementById('live');
  if (!live) return;
  const url = live.dataset.fragment;
  let skew = Number(live.dataset.now) - Date.now();
  let etag = null;
  let submitting = false;
  const short = (s) => s < 60 ? s + ' s' : s < 3600 ? Math.floor(s / 60) + ' min' : s < 172800 ? Math.floor(s / 3600) + ' h' : Math.floor(s / 86400) + ' d';
  const rel = (at, now) => { const s = Math.round((now - at) / 1000); return s >= 0 ? short(s) + ' ago' : 'in ' + short(-s); };
  const tick = () => {
    const now = Date.now() + skew;
    for (const t of document.querySelectorAll('time[data-at]')) t.textContent = rel(Number(t.dataset.at), now);
  };
  const note = (text) => {
    let p = document.getElementById('offline');
    if (!text) { if (p) p.remove(); return; }
    if (!p) { p = document.createElement('p'); p.id = 'offline'; p.className = 'flash flash-error'; p.setAttribute('role', 'alert'); live.before(p); }
    p.textContent = text;
  };
  const adopt = (res) => {
    const now = Number(res.headers.get('x-labgate-now'));
    if (now) skew = now - Date.now();
    const updated = live.querySelector('.updated time');
    if (updated && now) updated.dataset.at = String(now);
  };
  const poll = async () => {
    if (submitting || document.hidden) return;
    try {
      const res = await fetch(url, { headers: etag ? { 'if-none-match': etag } : {}, cache: 'no-store', credentials: 'same-origin' });
      if (res.status === 200) {
        const text = await res.text();
        if (!submitting) { live.innerHTML = text; etag = res.headers.get('etag'); }
        adopt(res); note('');
      } else if (res.status === 304) { adopt(res); note(''); }
      else note('Live updates stopped (HTTP ' + res.status + '). Reload the page' + (res.status === 401 ? ' and log in again.' : '.'));
    } catch { note('The gateway is not answering; still trying.'); }
    tick();
  };
  live.addEventListener('submit', (event) => {
    const question = event.target.dataset.confirm;
    if (question && !window.confirm(question)) { event.preventDefault(); return; }
    submitting = true;
  });
  setInterval(poll, 2000);
  setInterval(tick, 1000);
})();
`;
