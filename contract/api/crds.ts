/** The binding API CRDs, rendered from the kind definitions. */
import { stringify } from 'yaml';
import type { CustomResourceDefinition } from './_kind.js';
import { apiServiceBindingKind } from './api-service-binding.js';
import { apiServiceExportRequestKind } from './api-service-export-request.js';
import { apiServiceExportTemplateKind } from './api-service-export-template.js';
import { apiServiceExportKind } from './api-service-export.js';
import { apiServiceNamespaceKind } from './api-service-namespace.js';
import { appClusterBindingKind } from './app-cluster-binding.js';
import { clusterBindingKind } from './cluster-binding.js';

/** Every kind of the binding API, in a stable order. */
export const bindingKinds = [
  apiServiceExportKind,
  apiServiceExportRequestKind,
  apiServiceBindingKind,
  apiServiceNamespaceKind,
  clusterBindingKind,
  appClusterBindingKind,
  apiServiceExportTemplateKind,
] as const;

/** The CRDs of the binding API. */
export function bindingCrds(): CustomResourceDefinition[] {
  return bindingKinds.map((k) => k.crd());
}

/** controller-gen's file name for a CRD: `<group>_<plural>.yaml`. */
export function crdFileName(crd: Pick<CustomResourceDefinition, 'spec'>): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

/** Header of every generated CRD file. */
export const GENERATED_HEADER = '# Generated from contract/api by `npm run import`. Do not edit.\n';

/** The CRD files of the binding API: file name → YAML text. */
export function renderBindingCrdFiles(): Map<string, string> {
  const out = new Map<string, string>();
  for (const crd of bindingCrds()) {
    out.set(crdFileName(crd), GENERATED_HEADER + '---\n' + stringify(crd, { lineWidth: 0 }));
  }
  return out;
}
