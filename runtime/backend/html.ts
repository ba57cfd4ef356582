/**
 * Server-rendered pages of the bind backend (no external assets). The catalogue page works without
 * JavaScript — every detail is in the HTML, the filter is a GET form — and one inline script (allowed
 * by its hash in {@link RESOURCES_CSP}) filters as you type and adds Copy buttons.
 */
import { createHash } from 'node:crypto';
import type { ApiParameter, BindableApi } from './catalog.js';

export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const page = (title: string, body: string, extraStyle = ''): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d2733;line-height:1.45}
.card{border:1px solid #d0d7de;border-radius:6px;padding:1rem 1.25rem;margin:.75rem 0;display:flex;justify-content:space-between;align-items:center}
.card h2{font-size:1.1rem;margin:0 0 .25rem}.muted{color:#57606a;font-size:.9rem}
button{background:#1f6feb;color:#fff;border:0;border-radius:6px;padding:.5rem 1.25rem;font-size:1rem;cursor:pointer}
button:focus-visible,a:focus-visible,summary:focus-visible,input:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.error{border-color:#cf222e;color:#cf222e}
${extraStyle}
</style></head><body>${body}</body></html>`;

const CATALOGUE_STYLE = `
.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:1rem 0 .25rem}
.search label{font-weight:600}.search input{flex:1 1 14rem;font-size:1rem;padding:.45rem .6rem;border:1px solid #8c959f;border-radius:6px}
.search button{background:#f6f8fa;color:#1d2733;border:1px solid #8c959f}
.toc{display:flex;flex-wrap:wrap;gap:.25rem .75rem;padding:0;list-style:none;font-size:.9rem}
.api{border:1px solid #d0d7de;border-radius:6px;padding:1rem 1.25rem;margin:1rem 0}
.api .head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:flex-start;gap:.75rem}
.api h2{font-size:1.2rem;margin:0 0 .2rem}.api h3{font-size:1rem;margin:1rem 0 .4rem}
.facts{display:flex;flex-wrap:wrap;gap:.35rem;margin:.5rem 0;padding:0;list-style:none}
.facts li{background:#f6f8fa;border:1px solid #d0d7de;border-radius:1rem;padding:.05rem .6rem;font-size:.85rem}
details{margin:.5rem 0}summary{cursor:pointer;font-weight:600;padding:.2rem 0}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #d8dee4;vertical-align:top}th{background:#f6f8fa;white-space:nowrap}
td.num{text-align:right;white-space:nowrap}code,pre{font-family:ui-monospace,monospace;font-size:.85rem}
.flag{display:inline-block;background:#ddf4ff;border-radius:.75rem;padding:0 .45rem;margin:0 .15rem .1rem 0;font-size:.8rem}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.75rem;overflow-x:auto;margin:.25rem 0}
.copy{background:#f6f8fa;color:#1d2733;border:1px solid #8c959f;font-size:.85rem;padding:.25rem .75rem}
.warn{color:#9a6700}
@media (max-width:40rem){body{margin:1rem auto}.api{padding:.75rem}.api .head form{width:100%}.api .head button{width:100%}}`;

/** Filters the sections as you type, keeps the count current, and turns on the Copy buttons. */
const CATALOGUE_SCRIPT = `(function(){
var q=document.getElementById('q'),count=document.getElementById('count');
var items=[].slice.call(document.querySelectorAll('section[data-search]'));
function apply(){
var terms=q.value.toLowerCase().split(/\\s+/).filter(Boolean),n=0;
items.forEach(function(el){var text=el.getAttribute('data-search');var hit=terms.every(function(t){return text.indexOf(t)>=0;});el.hidden=!hit;if(hit)n++;});
count.textContent=countText(n,items.length,q.value.trim());
}
function countText(n,total,query){return query?n+' of '+total+' APIs match \\u201c'+query+'\\u201d':total+' APIs';}
q.addEventListener('input',apply);
[].slice.call(document.querySelectorAll('button[data-copy]')).forEach(function(b){
b.hidden=false;
b.addEventListener('click',function(){
var text=document.getElementById(b.getAttribute('data-copy')).textContent;
navigator.clipboard.writeText(text).then(function(){b.textContent='Copied';},function(){b.textContent='Select the text to copy';});
});
});
})();`;

/** The Content-Security-Policy of the catalogue page: nothing external, only the script above. */
export const RESOURCES_CSP =
  `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${createHash('sha256').update(CATALOGUE_SCRIPT).digest('base64')}'; ` +
  // (An IPv6 literal is not a valid CSP source — Chromium ignores `http://[::1]:*` — so it is not listed.)
  "form-action 'self' http://127.0.0.1:* http://localhost:*";

const apiName = (a: BindableApi) => `${a.resource}.${a.group}`;
const claimName = (c: { resource: string; group?: string }) => `${c.resource}${c.group ? '.' + c.group : ''}`;

/** Everything the filter matches on, lower case. */
export function searchText(a: BindableApi): string {
  const o = a.offering;
  return [
    a.kind,
    apiName(a),
    a.scope,
    ...a.versions,
    a.description ?? '',
    ...(o?.services.map((s) => s.name) ?? []),
    ...(o?.plans.flatMap((p) => [p.name, p.topology, p.cpu ?? '', p.memory ?? '', p.storage ?? '', ...p.flags, p.description ?? '']) ?? []),
    ...(o?.backends.flatMap((b) => [b.name, b.automation]) ?? []),
    ...(a.parameters?.map((p) => p.path) ?? []),
    ...a.permissionClaims.map(claimName),
  ]
    .join(' ')
    .toLowerCase()
    .replace(/\s+/g, ' ');
}

/** Whether an API matches every word of a query (as the script does in the browser). */
export function matchesQuery(a: BindableApi, query: string): boolean {
  const text = searchText(a);
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((t) => text.includes(t));
}

const table = (caption: string, head: string[], rows: string[][], numeric: number[] = []) => `<div class="scroll"><table>
<caption class="muted" style="text-align:left">${esc(caption)}</caption>
<thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${c}</th>` : `<td${numeric.includes(i) ? ' class="num"' : ''}>${c}</td>`)).join('')}</tr>`).join('\n')}</tbody></table></div>`;

function allowed(p: ApiParameter): string {
  const parts: string[] = [];
  if (p.enum) parts.push(p.enum.length > 8 ? `one of ${p.enum.length} values` : p.enum.map((e) => `<code>${esc(e)}</code>`).join(', '));
  parts.push(...p.constraints.map(esc));
  return parts.join('; ') || '—';
}

function section(a: BindableApi, p: { sessionId: string; csrf: string }, hidden: boolean): string {
  const name = apiName(a);
  const idBase = name.replace(/[^a-z0-9-]/gi, '-');
  const o = a.offering;
  // An operation on instances (ServiceBinding, Backup, …) has no services or plans: its backends list instance types.
  const operation = o !== undefined && o.services.length === 0 && o.plans.length === 0;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const facts = [
    a.versions.join(', '),
    a.scope,
    ...(o && !operation ? [plural(o.services.length, 'service'), plural(o.plans.length, 'plan')] : []),
    ...(operation ? [`for ${[...new Set(o.backends.flatMap((b) => b.services))].join(', ')}`] : []),
    ...(o?.backends.length ? [`backends: ${o.backends.map((b) => b.name).join(', ')}`] : []),
  ];
  const plans = o?.plans.length
    ? `<h3 id="${idBase}-plans">Plans</h3>${table(
        `Plans of ${a.kind}: size of one node, node count and flags`,
        ['Plan', 'Topology', 'Replicas', 'CPU', 'Memory', 'Storage', 'Flags', 'Services'],
        o.plans.map((pl) => [
          `<code>${esc(pl.name)}</code>${pl.description ? `<br><span class="muted">${esc(pl.description)}</span>` : ''}`,
          esc(pl.topology),
          String(pl.replicas),
          esc(pl.cpu ?? '—'),
          esc(pl.memory ?? '—'),
          esc(pl.storage ?? '—'),
          pl.flags.map((f) => `<span class="flag">${esc(f)}</span>`).join('') || '—',
          esc(
            o.services
              .filter((s) => s.plans.includes(pl.name))
              .map((s) => s.name)
              .join(', '),
          ),
        ]),
        [2, 3, 4, 5],
      )}`
    : '';
  const services = o?.services.length
    ? `<h3>Services</h3>${table(
        `Services (spec.service) of ${a.kind}`,
        ['Service', 'Plans', 'Backends'],
        o.services.map((s) => [
          `<code>${esc(s.name)}</code>`,
          esc(s.plans.join(', ')),
          esc(
            o.backends
              .filter((b) => b.services.includes(s.name))
              .map((b) => b.name)
              .join(', '),
          ),
        ]),
      )}`
    : '';
  const backends = o?.backends.length
    ? `<h3>Backends</h3>${table(
        `Backends of ${a.kind}: choose one with spec.${a.compositionRefField ?? 'compositionRef'}.name`,
        operation ? ['Backend', 'Automation', 'Instance types'] : ['Backend', 'Automation', 'Services', 'Plans'],
        o.backends.map((b) => [
          `<code>${esc(b.name)}</code>${b.default ? ' <span class="flag">default</span>' : ''}`,
          esc(b.automation),
          esc(b.services.join(', ')),
          ...(operation ? [] : [`${b.plans.length} of ${o.plans.length}`]),
        ]),
      )}`
    : '';
  const params = a.parameters?.length
    ? `<details><summary>Parameters (${a.parameters.length})</summary>${table(
        `Fields of spec in ${a.kind}`,
        ['Field', 'Type', 'Allowed', 'Default', 'Description'],
        a.parameters.map((x) => [
          `<code>spec.${esc(x.path)}</code>${x.required ? ' <span class="flag">required</span>' : ''}`,
          esc(x.type),
          allowed(x),
          x.default === undefined ? '—' : `<code>${esc(JSON.stringify(x.default))}</code>`,
          esc(x.description ?? ''),
        ]),
      )}</details>`
    : '';
  const example = a.exampleClaim
    ? `<details><summary>Example claim</summary><pre id="${idBase}-example" tabindex="0"><code>${esc(a.exampleClaim)}</code></pre>
<button type="button" class="copy" data-copy="${idBase}-example" hidden>Copy</button> <span class="muted">Apply it in your cluster after binding.</span></details>`
    : '';
  const grants = a.permissionClaims.length
    ? `<p class="muted">Binding also grants access to: ${esc([...new Set(a.permissionClaims.map(claimName))].join(', '))}</p>`
    : '';
  const offeringNote = a.offeringError ? `<p class="warn">Plans and backends are not shown: ${esc(a.offeringError)}</p>` : '';
  return `<section class="api" id="${idBase}" data-resource="${esc(name)}" data-search="${esc(searchText(a))}" aria-labelledby="${idBase}-title"${hidden ? ' hidden' : ''}>
<div class="head"><div><h2 id="${idBase}-title">${esc(a.kind)}</h2><div class="muted"><code>${esc(name)}</code></div></div>
<form method="post" action="/bind">
<input type="hidden" name="s" value="${esc(p.sessionId)}"><input type="hidden" name="csrf" value="${esc(p.csrf)}">
<input type="hidden" name="group" value="${esc(a.group)}"><input type="hidden" name="resource" value="${esc(a.resource)}">
<button type="submit" name="bind" value="${esc(name)}" aria-label="Bind ${esc(a.kind)} (${esc(name)})">Bind</button></form></div>
${a.description ? `<p>${esc(a.description)}</p>` : ''}<ul class="facts">${facts.map((f) => `<li>${esc(f)}</li>`).join('')}</ul>
${grants}${offeringNote}${plans}${services}${backends}${params}${example}
</section>`;
}

export function resourcesPage(p: { prettyName: string; user: string; sessionId: string; csrf: string; apis: BindableApi[]; query?: string }): string {
  const query = (p.query ?? '').trim();
  const shown = p.apis.filter((a) => matchesQuery(a, query));
  const count = query ? `${shown.length} of ${p.apis.length} APIs match \u201c${query}\u201d` : `${p.apis.length} APIs`;
  const body = p.apis.length
    ? `<form class="search" role="search" method="get" action="/resources">
<input type="hidden" name="s" value="${esc(p.sessionId)}">
<label for="q">Filter</label><input type="search" id="q" name="q" value="${esc(query)}" placeholder="postgresql, ssl, a8s, 4Gi, backup…" autocomplete="off" aria-describedby="count">
<button type="submit">Filter</button></form>
<p id="count" class="muted" aria-live="polite">${esc(count)}</p>
<nav aria-label="APIs"><ul class="toc">${p.apis.map((a) => `<li><a href="#${apiName(a).replace(/[^a-z0-9-]/gi, '-')}">${esc(a.kind)}</a></li>`).join('')}</ul></nav>
<main>
${p.apis.map((a) => section(a, p, !shown.includes(a))).join('\n')}
</main>
<script>${CATALOGUE_SCRIPT}</script>`
    : '<p class="muted">No APIs are offered yet: the provider has no APIServiceExportTemplate whose CRD is installed.</p>';
  return page(
    `${p.prettyName}: bindable APIs`,
    `<header><h1>${esc(p.prettyName)}</h1><p class="muted">Signed in as ${esc(p.user)}. Pick the API to bind into your cluster: compare plans, sizes and backends, then press Bind.</p></header>\n${body}`,
    CATALOGUE_STYLE,
  );
}

export function errorPage(status: number, message: string): string {
  return page(
    'Binding failed',
    `<h1>Binding failed (${status})</h1><div class="card error"><p>${esc(message)}</p></div>
<p class="muted">Run <code>kubectl bind &lt;url&gt;</code> again to start over.</p>`,
  );
}
