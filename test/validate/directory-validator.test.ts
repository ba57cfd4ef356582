/**
 * Validation a user gets without asking: `synthTopology` runs `directoryValidator()` (what
 * `klutch-kit validate` checks) on its output unless told `validate: false`; objects of kinds without
 * any schema are errors unless `allowUnknownKinds`.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ApiObject, App } from 'cdk8s';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { synthTopology } from '../../constructs/topology/index.js';
import { directoryValidator } from '../../constructs/validate/index.js';
import { TestCluster } from '../support/test-cluster.js';

/** The CRD of a made-up `widgets.example.com/v1` Widget whose `spec.size` is an integer. */
const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      },
    ],
  },
};
const widget = (size: unknown) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'team-a' }, spec: { size } });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-dirval-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function app(objects: Record<string, unknown>[]): App {
  const a = new App({ outdir: join(dir, 'unused') });
  const c = new TestCluster(a, 'one');
  objects.forEach((o, i) => new ApiObject(c, `o${i}`, o as never));
  return a;
}

describe('synthTopology validates by default', () => {
  it('refuses an object its schema rejects, naming file, object and field; nothing is written', async () => {
    const outdir = join(dir, 'dist');
    await expect(synthTopology(app([WIDGET_CRD, widget('big')]), { outdir })).rejects.toThrow(/synth: validation failed[\s\S]*Widget\/team-a\/w: spec\.size/);
    expect(existsSync(outdir)).toBe(false);
    await synthTopology(app([WIDGET_CRD, widget(3)]), { outdir });
    expect(existsSync(join(outdir, 'one'))).toBe(true);
  });

  it('refuses an object of a kind without any schema, unless told to accept it or not to validate', async () => {
    const outdir = join(dir, 'dist');
    await expect(synthTopology(app([widget('big')]), { outdir })).rejects.toThrow(
      'Widget/team-a/w: (object): no schema for example.com/v1 Widget, so it is not checked',
    );
    expect(existsSync(outdir)).toBe(false);
    await synthTopology(app([widget('big')]), { outdir, validate: directoryValidator({ allowUnknownKinds: true }) });
    rmSync(outdir, { recursive: true });
    await synthTopology(app([widget('big')]), { outdir, validate: false });
    expect(existsSync(join(outdir, 'one'))).toBe(true);
  });

  it('rejects a validate option that is neither a function nor false', async () => {
    await expect(synthTopology(app([]), { outdir: join(dir, 'dist'), validate: true as never })).rejects.toThrow(
      'SynthOptions.validate: true must be a function of the output folder (e.g. directoryValidator()) or false to skip validation',
    );
  });
});

describe('directoryValidator', () => {
  it('checks a folder as klutch-kit validate does; schemaDirs lends definitions kept elsewhere', () => {
    const app = join(dir, 'app');
    const defs = join(dir, 'defs');
    mkdirSync(app);
    mkdirSync(defs);
    writeFileSync(join(app, 'w.yaml'), stringify(widget('big')));
    writeFileSync(join(defs, 'crd.yaml'), stringify(WIDGET_CRD));
    expect(directoryValidator()(app).problems).toEqual([
      'w.yaml: Widget/team-a/w: (object): no schema for example.com/v1 Widget, so it is not checked: give the folder with its CRD or XRD (klutch-kit validate --schemas <folder>), or allow unknown kinds (--allow-unknown-kinds)',
    ]);
    expect(directoryValidator({ allowUnknownKinds: true })(app)).toEqual({ ok: true, problems: [] });
    const withDefs = directoryValidator({ schemaDirs: [defs] })(app);
    expect(withDefs.ok).toBe(false);
    expect(withDefs.problems.join('\n')).toMatch(/w\.yaml: Widget\/team-a\/w: spec\.size: .*integer/);
    // The definitions of one run do not leak into the next (each run works on a copy of the bundled schemas).
    expect(directoryValidator()(app).problems[0]).toContain('no schema for example.com/v1 Widget');
  });

  it('names the option and the value it refuses', () => {
    expect(() => directoryValidator({ crossplane: ['3' as never] })).toThrow('DirectoryValidatorOptions.crossplane: ["3"] must list "2", "1.20" or both');
    expect(() => directoryValidator({ allowUnknownKinds: 'yes' as never })).toThrow('DirectoryValidatorOptions.allowUnknownKinds: "yes" must be a boolean');
    expect(() => directoryValidator({ schemaDirs: [''] })).toThrow('DirectoryValidatorOptions.schemaDirs: [""] must be a list of folder paths');
  });
});
