import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import { AnyninesProviderConfig, AnyninesProviderConfigProps, AnyninesServiceType } from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

const CRD = 'provider-anynines/dataservices.anynines.com_providerconfigs.yaml';

const base: AnyninesProviderConfigProps = {
  name: 'postgresql-service-broker',
  serviceType: AnyninesServiceType.SERVICE_BROKER,
  url: 'https://postgresql-service-broker.example.com:3000',
  username: { namespace: 'crossplane-system', name: 'postgresql-service-broker-creds', key: 'username' },
  password: { namespace: 'crossplane-system', name: 'postgresql-service-broker-creds', key: 'password' },
};

describe('AnyninesProviderConfig', () => {
  it('emits a service broker ProviderConfig with Secret credentials, TLS and health endpoint', () => {
    const chart = Testing.chart();
    new AnyninesProviderConfig(chart, 'sb', {
      ...base,
      healthCheckEndpoint: '/instances',
      tls: { caBundleSecretRef: { namespace: 'crossplane-system', name: 'broker-ca', key: 'ca.crt' }, overrideServerName: 'broker.internal' },
    });
    new AnyninesProviderConfig(chart, 'bm', {
      ...base,
      name: 'postgresql-backup-manager',
      serviceType: AnyninesServiceType.BACKUP_MANAGER,
      url: 'http://pg-backup-manager:3000',
    });
    const [sb, bm] = Testing.synth(chart);
    expect(sb).toEqual({
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ProviderConfig',
      metadata: { name: 'postgresql-service-broker' },
      spec: {
        serviceType: 'servicebroker',
        url: 'https://postgresql-service-broker.example.com:3000',
        healthCheckEndpoint: '/instances',
        providerCredentials: { source: 'Secret', username: { secretRef: base.username }, password: { secretRef: base.password } },
        tls: { caBundleSecretRef: { namespace: 'crossplane-system', name: 'broker-ca', key: 'ca.crt' }, overrideServerName: 'broker.internal' },
      },
    });
    expect(bm.spec.serviceType).toBe('backupmanager');
    expect(bm.spec).not.toHaveProperty('tls');
    expect(schemaErrors(CRD, sb, 'v1')).toEqual([]);
    expect(schemaErrors(CRD, bm, 'v1')).toEqual([]);
  });

  it('throws on bad props, naming prop and value', () => {
    const chart = Testing.chart();
    expect(() => new AnyninesProviderConfig(chart, 'a', { ...base, serviceType: 'broker' as unknown as AnyninesServiceType })).toThrow(
      'AnyninesProviderConfigProps.serviceType: "broker" must be servicebroker or backupmanager',
    );
    expect(() => new AnyninesProviderConfig(chart, 'b', { ...base, url: 'broker:3000/x' })).toThrow(
      'AnyninesProviderConfigProps.url: "broker:3000/x" must use http or https',
    );
    expect(() => new AnyninesProviderConfig(chart, 'c', { ...base, url: 'not a url' })).toThrow(
      'AnyninesProviderConfigProps.url: "not a url" is not an absolute URL',
    );
    expect(() => new AnyninesProviderConfig(chart, 'd', { ...base, username: { namespace: 'ns', name: 's', key: '' } })).toThrow(
      'AnyninesProviderConfigProps.username.key: ""',
    );
    expect(() => new AnyninesProviderConfig(chart, 'e', { ...base, tls: { insecureSkipVerify: true, caBundleSecretRef: base.username } })).toThrow(
      'AnyninesProviderConfigProps.tls.insecureSkipVerify: true contradicts tls.caBundleSecretRef',
    );
    expect(() => new AnyninesProviderConfig(chart, 'f', { ...base, url: 'http://x:1', tls: { insecureSkipVerify: true } })).toThrow(
      'AnyninesProviderConfigProps.tls: {"insecureSkipVerify":true} has no effect on the plain-http url',
    );
    expect(() => new AnyninesProviderConfig(chart, 'g', { ...base, name: 'PG' })).toThrow('AnyninesProviderConfigProps.name: "PG"');
  });
});
