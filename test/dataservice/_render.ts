/**
 * A small function-patch-and-transform evaluator for tests: applies a Composition's
 * FromCompositeFieldPath patches (with map, string and convert transforms) to an XR and returns the
 * composed resources, so tests can assert what a claim turns into.
 */
type Obj = Record<string, any>;

/** Splits `metadata.labels[crossplane.io/claim-name]` / `a.b[0].c` into segments. */
export function segments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[([^\]]+)\]/g)) {
    if (m[1] !== undefined) out.push(m[1]);
    else out.push(/^[0-9]+$/.test(m[2]) ? Number(m[2]) : m[2]);
  }
  return out;
}

export function getPath(o: unknown, path: string): unknown {
  let cur: any = o;
  for (const s of segments(path)) {
    if (cur === undefined || cur === null) return undefined;
    cur = cur[s as any];
  }
  return cur;
}

export function setPath(o: Obj, path: string, v: unknown): void {
  const segs = segments(path);
  let cur: any = o;
  segs.forEach((s, i) => {
    if (i === segs.length - 1) cur[s as any] = v;
    else {
      if (cur[s as any] === undefined) cur[s as any] = typeof segs[i + 1] === 'number' ? [] : {};
      cur = cur[s as any];
    }
  });
}

function transform(v: unknown, t: Obj): unknown {
  switch (t.type) {
    case 'map': {
      if (!(String(v) in t.map)) throw new Error(`map transform: no key ${JSON.stringify(v)}`);
      return t.map[String(v)];
    }
    case 'string': {
      const s = t.string;
      const str = String(v);
      switch (s.type) {
        case 'Format':
          return (s.fmt as string).replace('%s', str);
        case 'TrimPrefix':
          return str.startsWith(s.trim) ? str.slice(s.trim.length) : str;
        case 'TrimSuffix':
          return str.endsWith(s.trim) ? str.slice(0, -s.trim.length) : str;
        case 'Convert':
          if (s.convert === 'ToLower') return str.toLowerCase();
          if (s.convert === 'ToUpper') return str.toUpperCase();
          throw new Error(`unsupported convert ${s.convert}`);
        case 'Regexp': {
          const m = new RegExp(s.regexp.match).exec(str);
          if (!m) throw new Error(`regexp ${s.regexp.match} does not match ${str}`);
          return m[s.regexp.group ?? 0];
        }
        default:
          throw new Error(`unsupported string transform ${s.type}`);
      }
    }
    case 'convert': {
      if (t.convert.toType === 'int' || t.convert.toType === 'int64') {
        const n = Number(v);
        if (!Number.isInteger(n)) throw new Error(`convert: ${JSON.stringify(v)} is not an integer`);
        return n;
      }
      if (t.convert.toType === 'string') return String(v);
      throw new Error(`unsupported convert ${t.convert.toType}`);
    }
    default:
      throw new Error(`unsupported transform ${t.type}`);
  }
}

/** The composed resources a Composition (as synthesized JSON) produces for an XR. */
export function render(composition: Obj, xr: Obj): Obj[] {
  const out: Obj[] = [];
  for (const step of composition.spec.pipeline) {
    for (const r of step.input.resources) {
      const res: Obj = structuredClone(r.base ?? {});
      for (const p of r.patches ?? []) {
        const type = p.type ?? 'FromCompositeFieldPath';
        if (type !== 'FromCompositeFieldPath') continue;
        let v = getPath(xr, p.fromFieldPath);
        if (v === undefined) continue;
        for (const t of p.transforms ?? []) v = transform(v, t);
        setPath(res, p.toFieldPath ?? p.fromFieldPath, v);
      }
      out.push(res);
    }
  }
  return out;
}

/** An XR as Crossplane creates it for a claim (labels with claim name and namespace). */
export function xrFor(claimName: string, namespace: string, spec: Obj): Obj {
  return {
    metadata: { name: `${claimName}-x7k2p`, labels: { 'crossplane.io/claim-name': claimName, 'crossplane.io/claim-namespace': namespace } },
    spec,
  };
}

/** The ToCompositeFieldPath patches of a composition as `from → to` strings. */
export function statusPatches(composition: Obj): string[] {
  return composition.spec.pipeline.flatMap((s: Obj) =>
    s.input.resources.flatMap((r: Obj) =>
      (r.patches ?? []).filter((p: Obj) => p.type === 'ToCompositeFieldPath').map((p: Obj) => `${p.fromFieldPath} -> ${p.toFieldPath}`),
    ),
  );
}
