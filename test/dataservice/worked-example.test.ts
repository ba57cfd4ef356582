/**
 * The README worked example (docs/dataservice.md): builds a data service that is not in the Klutch
 * catalogue from exactly the code block in the document, then checks what it emits and which claims
 * its XRD accepts, with the shared validator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import * as constructs from 'constructs';
import ts from 'typescript';
import * as dataservice from '../../constructs/dataservice/index.js';
import { validateDocuments } from '../../constructs/validate/index.js';
import { claimValidator } from '../catalogue/_equivalence.js';
import { AnyninesProviderConfig, type IProviderConfig } from '../../constructs/crossplane/index.js';
import { render, xrFor } from './_render.js';

type Obj = Record<string, any>;

const DOC = readFileSync(join(process.cwd(), 'docs', 'dataservice.md'), 'utf8');
const section = DOC.slice(DOC.indexOf('## Worked example'));
const CODE = /```ts\n([\s\S]*?)```/.exec(section)![1];

/** Compiles and runs the documented code; its imports resolve to this repository's modules. */
function load(): { addClickHouse: (scope: constructs.Construct, broker: IProviderConfig) => dataservice.DataService } {
  const js = ts.transpileModule(CODE, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const modules: Record<string, unknown> = { 'klutch-kit/dataservice': dataservice, constructs, cdk8s: { App, Chart } };
  const require = (id: string) => {
    if (!(id in modules)) throw new Error(`the worked example imports ${id}, which the test does not provide`);
    return modules[id];
  };
  const module = { exports: {} as Record<string, unknown> };
  new Function('require', 'module', 'exports', js)(require, module, module.exports);
  return module.exports as never;
}

function build() {
  const app = new App();
  const chart = new Chart(app, 'control-plane');
  const ds = load().addClickHouse(chart, AnyninesProviderConfig.fromName(chart, 'Broker', 'clickhouse-service-broker'));
  const objects = chart.toJson() as Obj[];
  return { ds, objects, find: (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)! };
}

describe('docs/dataservice.md worked example', () => {
  it('is under 50 lines of code', () => {
    expect(CODE.trimEnd().split('\n').length).toBeLessThan(50);
    expect(CODE).toContain('new DataService(');
  });

  const { ds, objects, find } = build();

  it('emits the XRD, one Composition per backend and the export template', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'APIServiceExportTemplate/clickhouseinstances',
      'CompositeResourceDefinition/xclickhouseinstances.analytics.example.com',
      'Composition/k8s-clickhouse',
      'Composition/vm-clickhouse',
    ]);
    const xrd = find('CompositeResourceDefinition', 'xclickhouseinstances.analytics.example.com');
    expect(xrd.spec.claimNames.kind).toBe('ClickhouseInstance');
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'k8s-clickhouse' });
    expect(ds.claimCrdName).toBe('clickhouseinstances.analytics.example.com');
    const t = find('APIServiceExportTemplate', 'clickhouseinstances');
    expect(t.spec.APIServiceSelector).toEqual({ group: 'analytics.example.com', resource: 'clickhouseinstances', version: 'v1' });
    expect(t.spec.permissionClaims[0]).toMatchObject({ resource: 'secrets', selector: { owner: 'Provider' } });
    const r = validateDocuments(objects.map((doc, index) => ({ file: 'clickhouse.yaml', index, doc })));
    expect(r.issues).toEqual([]);
  });

  it("is Ready when the operator's readiness rule holds (its profile's readyWhen), not when the Object exists", () => {
    expect(find('Composition', 'k8s-clickhouse').spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.phase', matchString: 'Running' },
    ]);
  });

  it('renders plans into operator resources and broker parameters', () => {
    const [obj] = render(
      find('Composition', 'k8s-clickhouse'),
      xrFor('events', 'team-a', { service: 'clickhouse25', plan: 'clickhouse-cluster-big-ssl', parameters: { maxConcurrentQueries: 50 } }),
    );
    expect(obj.spec.forProvider.manifest).toMatchObject({
      apiVersion: 'clickhouse.example.com/v1',
      kind: 'ClickHouse',
      metadata: { name: 'events', namespace: 'team-a' },
      spec: { version: 25, replicas: 3, volumeSize: '500Gi', resources: { requests: { cpu: '8', memory: '32Gi' } }, parameters: { maxConcurrentQueries: 50 } },
    });
    const [si] = render(
      find('Composition', 'vm-clickhouse'),
      xrFor('events', 'team-a', { service: 'clickhouse24', plan: 'clickhouse-single-small', parameters: { logLevel: 'error', maxConcurrentQueries: 5 } }),
    );
    expect(si.spec.forProvider).toMatchObject({
      serviceName: 'clickhouse24',
      planName: 'clickhouse-single-small',
      parameters: { logger_level: 'error', max_concurrent_queries: 5 },
    });
    expect(si.spec.providerConfigRef.name).toBe('clickhouse-service-broker');
  });

  it('accepts and rejects claims as documented', () => {
    const v = claimValidator(find('CompositeResourceDefinition', 'xclickhouseinstances.analytics.example.com') as never);
    const c = (spec: Obj) => ({ apiVersion: 'analytics.example.com/v1', kind: 'ClickhouseInstance', metadata: { name: 'events', namespace: 'team-a' }, spec });
    const msgs = (spec: Obj, old?: Obj) => v.validate(c(spec), old && c(old)).map((e) => e.message);
    const k8s = { name: 'k8s-clickhouse' };
    const vm = { name: 'vm-clickhouse' };
    expect(msgs({ service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s })).toEqual([]);
    expect(
      msgs(
        { service: 'clickhouse24', plan: 'clickhouse-single-big', compositionRef: k8s },
        { service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s },
      ),
    ).toEqual([]);
    expect(
      msgs(
        { service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s },
        { service: 'clickhouse24', plan: 'clickhouse-single-big', compositionRef: k8s },
      ),
    ).toEqual(['Transition from bigger to smaller plan size is not supported.']);
    expect(
      msgs(
        { service: 'clickhouse24', plan: 'clickhouse-single-big', compositionRef: k8s },
        { service: 'clickhouse24', plan: 'clickhouse-cluster-small-ssl', compositionRef: k8s },
      ),
    ).toEqual([
      'Migration from clustered to single Data Service Instance is not supported.',
      'Plan migrations not possible from Non-SSL to SSL and SSL to Non-SSL',
    ]);
    expect(msgs({ service: 'clickhouse25', plan: 'clickhouse-cluster-small-ssl', compositionRef: vm })).toEqual([
      'Unsupported service used for clickhouseinstance',
    ]);
    expect(msgs({ service: 'clickhouse25', plan: 'clickhouse-single-small', compositionRef: k8s })[0]).toMatch(
      /^Service clickhouse25 only supports the plans clickhouse-cluster-small-ssl, clickhouse-cluster-big-ssl/,
    );
    expect(msgs({ service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s, parameters: { logLevel: 'error' } })).toEqual([
      'parameters.logLevel is not supported for k8s-clickhouse',
    ]);
    expect(msgs({ service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: vm, parameters: { logLevel: 'error' } })).toEqual([]);
    expect(msgs({ service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s, parameters: { keeperNodes: 3 } })).toEqual([
      'parameters.keeperNodes is only supported for clustered plans',
    ]);
    expect(
      msgs({ service: 'clickhouse24', plan: 'clickhouse-cluster-small-ssl', compositionRef: k8s, parameters: { keeperNodes: 3, maxConcurrentQueries: 1001 } })
        .length,
    ).toBe(1);
    expect(
      msgs(
        { service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: k8s },
        { service: 'clickhouse25', plan: 'clickhouse-single-small', compositionRef: k8s },
      ),
    ).toContain('Service is an immutable field');
  });
});
