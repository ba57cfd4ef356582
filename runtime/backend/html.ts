/** Server-rendered pages of the bind backend (no scripts, no external assets). */
import type { BindableApi } from './catalog.js';

export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (title: string, body: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:56rem;padding:0 1rem;color:#1d2733}
.card{border:1px solid #d0d7de;border-radius:6px;padding:1rem 1.25rem;margin:.75rem 0;display:flex;justify-content:space-between;align-items:center}
.card h2{font-size:1.1rem;margin:0 0 .25rem}.muted{color:#57606a;font-size:.9rem}
button{background:#1f6feb;color:#fff;border:0;border-radius:6px;padding:.5rem 1.25rem;font-size:1rem;cursor:pointer}
.error{border-color:#cf222e;color:#cf222e}
</style></head><body>${body}</body></html>`;

export function resourcesPage(p: { prettyName: string; user: string; sessionId: string; csrf: string; apis: BindableApi[] }): string {
  const cards = p.apis.length
    ? p.apis
        .map(
          (a) => `<div class="card" data-resource="${esc(a.resource)}.${esc(a.group)}">
<div><h2>${esc(a.kind)}</h2><div class="muted">${esc(a.resource)}.${esc(a.group)} · ${esc(a.versions.join(', '))} · ${esc(a.scope)}${
            a.permissionClaims.length
              ? ` · also grants access to: ${esc(a.permissionClaims.map((c) => `${c.resource}${c.group ? '.' + c.group : ''}`).join(', '))}`
              : ''
          }</div></div>
<form method="post" action="/bind">
<input type="hidden" name="s" value="${esc(p.sessionId)}"><input type="hidden" name="csrf" value="${esc(p.csrf)}">
<input type="hidden" name="group" value="${esc(a.group)}"><input type="hidden" name="resource" value="${esc(a.resource)}">
<button type="submit" name="bind" value="${esc(a.resource)}.${esc(a.group)}">Bind</button></form></div>`,
        )
        .join('\n')
    : '<p class="muted">No APIs are offered yet: the provider has no APIServiceExportTemplate whose CRD is installed.</p>';
  return page(
    `${p.prettyName}: bindable APIs`,
    `<h1>${esc(p.prettyName)}</h1><p class="muted">Signed in as ${esc(p.user)}. Pick the API to bind into your cluster.</p>\n${cards}`,
  );
}

export function errorPage(status: number, message: string): string {
  return page('Binding failed', `<h1>Binding failed (${status})</h1><div class="card error"><p>${esc(message)}</p></div>
<p class="muted">Run <code>kubectl bind &lt;url&gt;</code> again to start over.</p>`);
}
