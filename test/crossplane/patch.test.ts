import { describe, expect, it } from '@jest/globals';
import { FromFieldPathPolicy, Patch, PatchType, ToFieldPathPolicy, Transform } from '../../constructs/crossplane/index.js';
import { ptInputErrors } from './_schema.js';

function asInput(patches: Patch[], patchSets: { name: string; patches: Patch[] }[] = []) {
  return {
    apiVersion: 'pt.fn.crossplane.io/v1beta1',
    kind: 'Resources',
    patchSets: patchSets.map((s) => ({ name: s.name, patches: s.patches.map((p) => p.toJson()) })),
    resources: [{ name: 'r', patches: patches.map((p) => p.toJson()) }],
  };
}

describe('Patch', () => {
  it('renders From/To/Combine/PatchSet patches valid for the P&T input CRD', () => {
    const patches = [
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-namespace]', 'spec.forProvider.manifest.metadata.namespace'),
      Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.manifest.spec.volumeSize', {
        transforms: [Transform.stringRegexp('\\b(\\w+)$'), Transform.map({ nano: '3Gi' })],
        fromFieldPathPolicy: FromFieldPathPolicy.REQUIRED,
        toFieldPathPolicy: ToFieldPathPolicy.MERGE_OBJECTS,
      }),
      Patch.toCompositeFieldPath('status.atProvider.state', 'status.managed.state'),
      Patch.fromCompositeFieldPath('spec.parameters'),
      Patch.combineFromComposite(['metadata.labels[crossplane.io/claim-name]', 'spec.service'], '%s-%s', 'metadata.name'),
      Patch.combineToComposite(['status.a', 'status.b'], '%s:%d', 'status.managed.endpoint'),
      Patch.fromEnvironmentFieldPath('region', 'spec.forProvider.region'),
      Patch.patchSet('common'),
    ];
    expect(ptInputErrors(asInput(patches, [{ name: 'common', patches: [Patch.fromCompositeFieldPath('spec.a', 'spec.b')] }]))).toEqual([]);
    expect(patches[1].toJson()).toEqual({
      type: 'FromCompositeFieldPath',
      fromFieldPath: 'spec.plan',
      toFieldPath: 'spec.forProvider.manifest.spec.volumeSize',
      transforms: [
        { type: 'string', string: { type: 'Regexp', regexp: { match: '\\b(\\w+)$' } } },
        { type: 'map', map: { nano: '3Gi' } },
      ],
      policy: { fromFieldPath: 'Required', toFieldPath: 'MergeObjects' },
    });
    expect(patches[4].toJson()).toEqual({
      type: 'CombineFromComposite',
      combine: {
        strategy: 'string',
        variables: [{ fromFieldPath: 'metadata.labels[crossplane.io/claim-name]' }, { fromFieldPath: 'spec.service' }],
        string: { fmt: '%s-%s' },
      },
      toFieldPath: 'metadata.name',
    });
    expect(patches[7].toJson()).toEqual({ type: 'PatchSet', patchSetName: 'common' });
    expect(patches[7].patchSetName).toBe('common');
    expect(patches[0].patchSetName).toBeUndefined();
    expect(patches[2].type).toBe(PatchType.TO_COMPOSITE_FIELD_PATH);
  });

  it('accepts field paths with bracketed keys and indices', () => {
    for (const p of ['spec.containers[0].image', 'metadata.annotations[example.org/a.b]', 'spec.forProvider.parameters.repl-backlog-size', '[x].y']) {
      expect(() => Patch.fromCompositeFieldPath(p, p)).not.toThrow();
    }
  });

  it('throws on bad field paths, formats and policies', () => {
    expect(() => Patch.fromCompositeFieldPath('', 'spec.a')).toThrow('Patch.fromCompositeFieldPath(fromFieldPath): "" is not a Crossplane field path');
    expect(() => Patch.fromCompositeFieldPath('spec..a')).toThrow('Patch.fromCompositeFieldPath(fromFieldPath): "spec..a" is not a Crossplane field path');
    expect(() => Patch.toCompositeFieldPath('status.a', 'status.b[')).toThrow('Patch.toCompositeFieldPath(toFieldPath): "status.b["');
    expect(() => Patch.combineFromComposite([], '%s', 'spec.a')).toThrow('Patch.combineFromComposite(variables): [] must list at least one field path');
    expect(() => Patch.combineFromComposite(['spec.a', 'spec.b'], '%s', 'spec.c')).toThrow(
      'Patch.combineFromComposite(fmt): "%s" has 1 format verb(s) but 2 variable(s) are given',
    );
    expect(() => Patch.combineFromComposite(['spec.a'], '100%% %s', 'spec.c')).not.toThrow();
    expect(() => Patch.combineFromComposite(['spec.a', 'spec.b'], '%[2]s-%[1]s-%[2]s', 'spec.c')).not.toThrow();
    expect(() => Patch.combineFromComposite(['spec.a'], 'plain', 'spec.c')).toThrow(
      'Patch.combineFromComposite(fmt): "plain" has 0 format verb(s) but 1 variable(s) are given',
    );
    expect(() => Patch.fromCompositeFieldPath('spec.a', 'spec.b', { fromFieldPathPolicy: 'Maybe' as unknown as FromFieldPathPolicy })).toThrow(
      'Patch.fromCompositeFieldPath(options.fromFieldPathPolicy): "Maybe" must be FromFieldPathPolicy.OPTIONAL or FromFieldPathPolicy.REQUIRED',
    );
    expect(() => Patch.fromCompositeFieldPath('spec.a', 'spec.b', { toFieldPathPolicy: 'Merge' as unknown as ToFieldPathPolicy })).toThrow(
      'Patch.fromCompositeFieldPath(options.toFieldPathPolicy): "Merge" must be a ToFieldPathPolicy (REPLACE, MERGE_OBJECTS, ...)',
    );
    expect(() => Patch.fromCompositeFieldPath('spec.a', 'spec.b', { transforms: [{ type: 'map' } as unknown as Transform] })).toThrow(
      'Patch.fromCompositeFieldPath(options.transforms[0]): {"type":"map"} must be made with a Transform factory',
    );
    expect(() => Patch.patchSet('Not_A_Name')).toThrow('Patch.patchSet(patchSetName): "Not_A_Name"');
  });
});
